#!/usr/bin/env bash
# Builds the HeraldWire fuzzer, seeds its working corpus from the test fixtures, and fuzzes.
# Usage: Fuzz/run.sh [SECONDS]        (default 60; from any directory)
# Environment:
#   FUZZ_FORK=N      run N fuzzing processes in libFuzzer's fork mode, carrying on past crashes
#                    (-ignore_crashes); default 0: one in-process fuzzer that stops at the first crash
#   FUZZ_NO_BUILD=1  reuse .build/fuzz/wire-fuzzer as it is
#   FUZZ_ARGS="..."  extra libFuzzer flags
# Output: the working corpus grows in .build/fuzz/corpus, crash/timeout/OOM inputs land in
# .build/fuzz/artifacts/, the full log in .build/fuzz/logs/; the final statistics are printed at the end.
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 [SECONDS]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=".build/fuzz"

if [ "${FUZZ_NO_BUILD:-0}" != "1" ] || [ ! -x "$out/wire-fuzzer" ]; then
    Fuzz/build.sh
fi

mkdir -p "$out/corpus" "$out/artifacts" "$out/logs"
python3 Fuzz/seed_corpus.py "$out/corpus" \
    Tests/HeraldWireTests/Fixtures/realistic.corpus Tests/HeraldWireTests/Fixtures/large.corpus

log="$out/logs/run-$(date +%Y%m%d-%H%M%S).log"
flags=(
    -max_total_time="$seconds"
    -max_len=9000
    -timeout=10
    -rss_limit_mb=4096
    -print_final_stats=1
    -dict=Fuzz/wire.dict
    -artifact_prefix="$out/artifacts/"
)
fork="${FUZZ_FORK:-0}"
if [ "$fork" -gt 0 ]; then
    flags+=(-fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
# shellcheck disable=SC2206
extra=(${FUZZ_ARGS:-})

echo "fuzzing for ${seconds}s; log: $log" >&2
status=0
# SWIFT_BACKTRACE: the Swift runtime's own crash backtracer fights ASan (and can hang); libFuzzer's
# deadly-signal handler prints the stack instead.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" \
    "$out/wire-fuzzer" "${flags[@]}" "${extra[@]}" "$out/corpus" >"$log" 2>&1 || status=$?

echo "---- final status and statistics ($log) ----"
grep -E '^stat::' "$log" || true
grep -E '^#[0-9]+' "$log" | tail -n 1 || true  # the last status line: executions, cov, ft, corpus, exec/s
grep -E 'Test unit written to|==ERROR|Fatal error|deadly signal|SUMMARY' "$log" || true
echo "crash artifacts in $out/artifacts/: $(find "$out/artifacts" -type f | wc -l)"
exit "$status"
