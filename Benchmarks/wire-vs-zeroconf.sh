#!/usr/bin/env bash
# Parse throughput of HeraldWire (release build) next to python-zeroconf's compiled DNSIncoming, on the
# same corpus files, in one run. Prints both and the ratio.
#
#   Benchmarks/wire-vs-zeroconf.sh [SECONDS] [CORPUS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
shift || true
corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(Tests/HeraldWireTests/Fixtures/realistic.corpus Tests/HeraldWireTests/Fixtures/large.corpus)

python3 -c 'import zeroconf' 2>/dev/null || pip install --quiet zeroconf
swift build -c release --static-swift-stdlib --product herald-wire-benchmark >/dev/null
bench=$(swift build -c release --static-swift-stdlib --show-bin-path)/herald-wire-benchmark

for corpus in "${corpora[@]}"; do
    echo "== $corpus"
    herald=$("$bench" "$corpus" --seconds "$seconds" --json)
    zeroconf=$(python3 Benchmarks/zeroconf_parse.py "$corpus" "$seconds")
    python3 - "$herald" "$zeroconf" <<'PY'
import json, sys
herald = [json.loads(line) for line in sys.argv[1].splitlines()]
zeroconf = json.loads(sys.argv[2])
parse = next(r for r in herald if r["operation"] == "parse")
serialize = next(r for r in herald if r["operation"] == "serialize")
print(f"  herald parse       {parse['messages_per_s']:>10,} msg/s {parse['records_per_s']:>12,} records/s {parse['ns_per_message']:>10} ns/msg")
print(f"  {zeroconf['implementation']:<18} {zeroconf['messages_per_s']:>10,} msg/s {zeroconf['records_per_s']:>12,} records/s {zeroconf['ns_per_message']:>10} ns/msg")
print(f"  herald serialize   {serialize['messages_per_s']:>10,} msg/s {serialize['records_per_s']:>12,} records/s {serialize['ns_per_message']:>10} ns/msg")
print(f"  parse ratio herald / zeroconf: {parse['messages_per_s'] / zeroconf['messages_per_s']:.1f}x")
PY
done
