#!/bin/sh
# Installs the Debian packages that building Herald needs besides the Swift toolchain, when they are missing:
#   libsqlite3-dev   SQLite's header and library, for the permission store (Sources/CSQLite)
#   libexpat1-dev    the XML parser that property-list manifests and Avahi service files are read with (Sources/CExpat)
#   libsystemd-dev   sd-bus, the D-Bus library Avahi's D-Bus API is served with (Sources/CSystemdBus)
# Run as root to install; run as another user it only checks, and names what to install.
# Idempotent; prints one line per package installed, nothing when all are there.
set -eu

packages="libsqlite3-dev libexpat1-dev libsystemd-dev"

missing=""
for pkg in $packages; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-build-deps: building Herald needs:$missing; install them (apt-get install$missing) and run again" >&2
    exit 69
fi

log=$(mktemp /tmp/install-build-deps.XXXXXX)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get -qq -o Dpkg::Use-Pty=0 update >"$log" 2>&1 || { echo "install-build-deps: apt-get update failed" >&2; cat "$log" >&2; exit 1; }
for pkg in $missing; do
    if ! apt-get -qq -o Dpkg::Use-Pty=0 install -y --no-install-recommends "$pkg" >"$log" 2>&1; then
        echo "install-build-deps: apt-get install $pkg failed; log follows" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "installed $pkg"
done
