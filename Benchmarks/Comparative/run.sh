#!/bin/sh
# Herald against avahi-daemon (and python-zeroconf), side by side on a LAN of network namespaces.
#
#   sudo Benchmarks/Comparative/run.sh [--quick] [--no-build] [BENCHMARK ...] [bench.py options]
#
# Benchmarks: cold_browse time_to_visible scale footprint many_clients storm office dbus (default: all).
# Installs what is missing (avahi-daemon, avahi-utils, dbus, iproute2, util-linux; for the dbus benchmark's
# libavahi-client program gcc, pkg-config and libavahi-client-dev; python3 zeroconf and matplotlib from PyPI),
# builds heraldd and herald in release mode, runs bench.py (which creates its namespaces and always deletes
# them), then draws the charts and the results table (report.py).
# Results: Benchmarks/Comparative/results.json (results-quick.json with --quick), charts in
# Benchmarks/charts/, the Markdown table on standard output and in Benchmarks/Comparative/results.md.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
    echo "run.sh: needs root (network namespaces, veth pairs, mounts); try: sudo $0 $*" >&2
    exit 1
fi

build=yes
quick=no
for arg in "$@"; do
    case "$arg" in
        --no-build) build=no ;;
        --quick) quick=yes ;;
    esac
done

missing=""
command -v avahi-daemon >/dev/null 2>&1 || missing="$missing avahi-daemon"
command -v avahi-browse >/dev/null 2>&1 || missing="$missing avahi-utils"
command -v dbus-daemon >/dev/null 2>&1 || missing="$missing dbus"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v nsenter >/dev/null 2>&1 || missing="$missing util-linux"
command -v sysctl >/dev/null 2>&1 || missing="$missing procps"
command -v python3 >/dev/null 2>&1 || missing="$missing python3 python3-pip"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
pkg-config --exists avahi-client 2>/dev/null || missing="$missing libavahi-client-dev"
if [ -n "$missing" ]; then
    echo "run.sh: installing$missing"
    apt-get update -qq
    # The packaged avahi-daemon must not start on the machine itself: policy-rc.d refuses service starts.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    rm -f /usr/sbin/policy-rc.d
fi
python=$(command -v python3)
for module in zeroconf matplotlib; do
    if ! "$python" -c "import $module" 2>/dev/null; then
        echo "run.sh: installing python module $module"
        "$python" -m pip install -q "$module" || "$python" -m pip install -q --break-system-packages "$module"
    fi
done

if [ "$build" = yes ]; then
    (cd "$repo" && swift build -c release --static-swift-stdlib --product heraldd && swift build -c release --static-swift-stdlib --product herald)
fi

results="$here/results.json"
[ "$quick" = yes ] && results="$here/results-quick.json"
args=""
for arg in "$@"; do
    [ "$arg" = --no-build ] || args="$args $arg"
done
# shellcheck disable=SC2086
"$python" "$here/bench.py" --out "$results" $args
"$python" "$here/report.py" "$results" --charts "$repo/Benchmarks/charts" --markdown "$here/results.md"
