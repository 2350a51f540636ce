#!/bin/sh
# Installs what the Herald integration tests (Tests/HeraldIntegrationTests) need:
# network-namespace tooling, Avahi and its D-Bus bus as a test peer, dig, the
# dns_sd.h compatibility headers, and python-zeroconf.
#
# Idempotent: every package is installed only when missing; run it as often as
# you like. Output is one line per thing installed (or changed); details of a
# failed step are printed from a log.
#
# Avahi must never run in this machine's own network namespace: the tests start
# their own avahi-daemons inside private network namespaces, and an Avahi on the
# real LAN would both send mDNS there and take port 5353 from Herald. Debian's
# avahi-daemon postinst enables the service (and its socket unit) and tries to
# start it. So:
#   1. while installing, /usr/sbin/policy-rc.d answers 101 ("action
#      forbidden"), which both invoke-rc.d and deb-systemd-invoke honour, so
#      the postinst cannot start anything (an existing policy-rc.d is moved
#      aside meanwhile and put back afterwards);
#   2. afterwards the units are masked (so neither boot, socket activation nor
#      D-Bus activation can start the daemon later) and any SysV start link is
#      disabled;
#   3. if an avahi-daemon is nevertheless running in the network namespace
#      this script runs in, it is stopped (the tests' daemons live in other
#      namespaces and are left alone).
# libnss-mdns adds "mdns4_minimal" to /etc/nsswitch.conf; it only talks to
# Avahi's Unix socket and sends no packets itself, so with no Avahi in this
# namespace .local lookups here simply fall through.
set -eu

if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-deps: must run as root" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/install-test-deps.XXXXXX)
policy=/usr/sbin/policy-rc.d
saved_policy=/usr/sbin/policy-rc.d.install-test-deps
our_policy=""

cleanup() {
    if [ -n "$our_policy" ]; then
        rm -f "$policy"
        if [ -e "$saved_policy" ]; then mv "$saved_policy" "$policy"; fi
    fi
    rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A policy-rc.d saved by a run that was killed outright goes back first.
if [ -e "$saved_policy" ]; then mv "$saved_policy" "$policy"; fi

fail() {
    echo "install-test-deps: $1 failed; log follows" >&2
    cat "$log" >&2
    exit 1
}

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# iproute2: ip netns/link/addr; util-linux: nsenter, unshare; dbus: a system
# bus per namespace for avahi-browse/avahi-publish; dnsutils: dig (legacy
# unicast queries); libnss-mdns: getent/ping of .local through the NSS socket;
# libavahi-compat-libdnssd-dev, libavahi-compat-libdnssd1: dns_sd.h and the library the drop-in C API tests link
# against (they then run on Herald's);
# sqlite3: store checks in tests (the build's own packages, libsqlite3-dev and libexpat1-dev, come from install-build-deps.sh);
# systemd: systemd-analyze, systemd-sysusers and systemd-tmpfiles for checking the units (nothing is started);
# barrier and xvfb: a real Debian app built against dns_sd.h (its GUI advertises and browses
# _barrierServerZeroconf._tcp), run on a virtual X display against Herald's libdns_sd;
# cups-daemon, snapserver: real daemons that publish through libavahi-client, run against heraldd's D-Bus API.
# dpkg-dev, debhelper, lintian and debootstrap: the Debian package is built, checked and installed into a fresh
# Debian 12 tree (Scripts/build-deb.sh, DebianPackageTests).
# nftables and libnftables1: the nft tool the kernel enforcement tests read the rules with, and the library heraldd
# loads to write them (docs/enforcement.md); nothing is started and no rules are loaded by installing them.
# python3-zeroconf: python-zeroconf for the system's python3, which the enforcement tests run as an unprivileged
# app user (the pip copy below belongs to the python3 first on PATH, which may be root's own).
# tshark is optional and deliberately not installed.
missing=""
for pkg in iproute2 util-linux avahi-daemon avahi-utils dbus dnsutils libnss-mdns libavahi-compat-libdnssd-dev libavahi-compat-libdnssd1 sqlite3 systemd barrier xvfb cups-daemon snapserver dpkg-dev debhelper lintian debootstrap nftables libnftables1 python3-zeroconf; do
    installed "$pkg" || missing="$missing $pkg"
done

if [ -n "$missing" ]; then
    if [ -e "$policy" ]; then mv "$policy" "$saved_policy"; fi
    our_policy=1
    printf '#!/bin/sh\n# temporary, from Scripts/install-test-deps.sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    apt-get -qq -o Dpkg::Use-Pty=0 update >"$log" 2>&1 || fail "apt-get update"
    for pkg in $missing; do
        apt-get -qq -o Dpkg::Use-Pty=0 install -y --no-install-recommends "$pkg" >"$log" 2>&1 \
            || fail "apt-get install $pkg"
        echo "installed $pkg"
    done
fi

# What building Herald needs.
sh "$(dirname "$0")/install-build-deps.sh"

# Keep Avahi from ever starting in this namespace (see above).
if [ -e /lib/systemd/system/avahi-daemon.service ] || [ -e /usr/lib/systemd/system/avahi-daemon.service ]; then
    for unit in avahi-daemon.service avahi-daemon.socket; do
        if [ "$(readlink "/etc/systemd/system/$unit" 2>/dev/null || true)" != /dev/null ]; then
            # systemctl masks offline too; fall back to the symlink it would make.
            systemctl mask "$unit" >"$log" 2>&1 || ln -sf /dev/null "/etc/systemd/system/$unit"
            echo "masked $unit"
        fi
    done
fi
if [ -x /etc/init.d/avahi-daemon ] && ls /etc/rc[2345].d/S*avahi-daemon >/dev/null 2>&1; then
    update-rc.d avahi-daemon disable >"$log" 2>&1 || true
    echo "disabled avahi-daemon init script"
fi
root_netns=$(readlink /proc/self/ns/net)
for pid in $(pidof avahi-daemon 2>/dev/null || true); do
    if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null || true)" = "$root_netns" ]; then
        if [ -d /run/systemd/system ]; then
            systemctl stop avahi-daemon.socket avahi-daemon.service >"$log" 2>&1 || true
        fi
        # avahi-daemon --kill signals the daemon named by /run/avahi-daemon/pid,
        # which in this mount namespace is the host's own daemon.
        avahi-daemon --kill >"$log" 2>&1 || kill "$pid" 2>/dev/null || true
        echo "stopped avahi-daemon running in the host namespace (pid $pid)"
    fi
done

# python-zeroconf for the python3 that the tests find first on PATH.
if ! python3 -c 'import zeroconf' >/dev/null 2>&1; then
    if ! python3 -m pip install -q zeroconf >"$log" 2>&1; then
        # Debian's own python3 is "externally managed" (PEP 668).
        python3 -m pip install -q --break-system-packages zeroconf >"$log" 2>&1 || fail "pip install zeroconf"
    fi
    echo "installed zeroconf (pip, $(command -v python3))"
fi

# dnspython: a strict DNS library as a legacy unicast client (it refuses compression where unicast DNS forbids it).
if ! python3 -c 'import dns.message' >/dev/null 2>&1; then
    if ! python3 -m pip install -q dnspython >"$log" 2>&1; then
        python3 -m pip install -q --break-system-packages dnspython >"$log" 2>&1 || fail "pip install dnspython"
    fi
    echo "installed dnspython (pip, $(command -v python3))"
fi
