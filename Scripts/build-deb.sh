#!/usr/bin/env bash
# Builds Herald's Debian package and checks it with lintian.
#
#   bash Scripts/build-deb.sh [--out DIR] [--bin-dir DIR]
#
# Copies the tree (the files git tracks, and new ones it does not ignore) to DIR/herald-VERSION (default DIR:
# .build-deb), adds Scripts/debian as its debian/ directory and runs `dpkg-buildpackage -b`, which builds heraldd
# and herald in release mode (or, with --bin-dir, packages the release binaries built there with
# `swift build -c release --static-swift-stdlib`). The package is DIR/herald_VERSION_ARCH.deb; lintian must find no error and no
# warning in it (the overrides in Scripts/debian/herald.lintian-overrides say why each is there). Installs what it
# needs (debhelper, lintian, and the build's own libraries through Scripts/install-build-deps.sh) when missing.
# Install the package with:  apt install ./DIR/herald_VERSION_ARCH.deb
set -euo pipefail
cd "$(dirname "$0")/.."

out=$PWD/.build-deb
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --bin-dir) export HERALD_BIN_DIR=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-deb.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
if [ -n "${HERALD_BIN_DIR:-}" ]; then HERALD_BIN_DIR=$(cd "$HERALD_BIN_DIR" && pwd); fi

missing=()
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "build-deb.sh: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
sh Scripts/install-build-deps.sh

version=$(dpkg-parsechangelog -l Scripts/debian/changelog -S Version)
stage=$out/herald-${version%-*}
mkdir -p "$stage"
# A fresh copy of the sources each time; the stage's .build is kept, so a second run builds only what changed.
find "$stage" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] && printf '%s\0' "$file"
done | tar --null -T - -cf - | tar -xf - -C "$stage"
cp -r Scripts/debian "$stage/debian"
rm -f "$out"/herald_*.deb "$out"/herald_*.buildinfo "$out"/herald_*.changes

(cd "$stage" && dpkg-buildpackage -b -us -uc --no-sign) >"$out/build.log" 2>&1 || {
    echo "build-deb.sh: dpkg-buildpackage failed; the end of $out/build.log follows" >&2
    tail -40 "$out/build.log" >&2
    exit 1
}
deb=$(ls "$out"/herald_"$version"_*.deb)
lintian --fail-on error,warning "$deb"
echo "$deb"
