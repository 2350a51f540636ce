#!/usr/bin/env bash
# Installs what is missing, builds Herald in release mode, and shows it at work.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || { echo "demo: the Swift toolchain (swift) is not on PATH" >&2; exit 69; }

echo "== building Herald (release)"
swift build -c release --product herald >/dev/null
swift build -c release --product heraldd >/dev/null
bin=$(swift build -c release --show-bin-path)

echo "== three mDNS messages captured on a LAN of Avahi and python-zeroconf hosts, as Herald decodes them"
"$bin/herald" inspect --limit 3 Tests/HeraldWireTests/Fixtures/realistic.corpus
echo "== the whole capture: $("$bin/herald" inspect Tests/HeraldWireTests/Fixtures/realistic.corpus --json | wc -l) messages decoded"
