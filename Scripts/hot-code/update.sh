#!/usr/bin/env bash
# Rewrites Sources/heraldd/hot-code.order, the order in which heraldd's release link places its functions, from a
# profile of a release heraldd at work (Scripts/hot-code/profile.py). Run as root after changes to the code that
# serving runs; ReleaseBuildTests says when too much of the order no longer names heraldd's functions.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
for tool in valgrind callgrind_control strip nm; do
    command -v "$tool" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind binutils >/dev/null; break; }
done
python3 -c "import zeroconf" 2>/dev/null || python3 -m pip install -q zeroconf || python3 -m pip install -q --break-system-packages zeroconf
swift build -c release --static-swift-stdlib --product heraldd
swift build -c release --static-swift-stdlib --product herald
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
python3 Scripts/hot-code/profile.py "$bin/heraldd" Sources/heraldd/hot-code.order
# The new order takes effect when heraldd is linked again.
rm -f "$bin/heraldd"
swift build -c release --static-swift-stdlib --product heraldd
