#!/usr/bin/env bash
# Builds a fuzz target, seeds its working corpus, and fuzzes it.
# Usage: Fuzz/run.sh [TARGET] [SECONDS]     (TARGET: wire, ipc, control, manifest, services; default wire;
#                                            SECONDS default 60; from any directory)
#        Fuzz/run.sh SECONDS                 (the wire target, as before)
# Environment:
#   FUZZ_FORK=N      run N fuzzing processes in libFuzzer's fork mode, carrying on past crashes
#                    (-ignore_crashes); default 0: one in-process fuzzer that stops at the first crash
#   FUZZ_NO_BUILD=1  reuse .build/fuzz/TARGET-fuzzer as it is
#   FUZZ_ARGS="..."  extra libFuzzer flags
# Output: the working corpus grows in .build/fuzz/corpus/TARGET (the wire target: .build/fuzz/corpus),
# crash/timeout/OOM inputs land in .build/fuzz/artifacts/TARGET/, the full log in .build/fuzz/logs/; the final
# statistics are printed at the end.
set -euo pipefail

target="wire"
if [ $# -ge 1 ] && ! [[ "$1" =~ ^[0-9]+$ ]]; then
    target="$1"
    shift
fi
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 [TARGET] [SECONDS]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=".build/fuzz"
binary="$out/$target-fuzzer"

if [ "${FUZZ_NO_BUILD:-0}" != "1" ] || [ ! -x "$binary" ]; then
    Fuzz/build.sh "$target"
fi

# SWIFT_BACKTRACE: the Swift runtime's own crash backtracer fights ASan (and can hang); libFuzzer's
# deadly-signal handler prints the stack instead.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

corpus="$out/corpus/$target"
artifacts="$out/artifacts/$target"
max_len=9000
dict=()
case "$target" in
wire)
    # The wire target keeps its corpus where it always did.
    corpus="$out/corpus"
    artifacts="$out/artifacts"
    mkdir -p "$corpus"
    python3 Fuzz/seed_corpus.py "$corpus" \
        Tests/HeraldWireTests/Fixtures/realistic.corpus Tests/HeraldWireTests/Fixtures/large.corpus
    dict=(-dict=Fuzz/wire.dict)
    ;;
ipc | control)
    # Seeds built by the target itself with the module's encoders (FuzzSupport.writeSeedsIfAsked).
    mkdir -p "$corpus"
    FUZZ_WRITE_SEEDS="$corpus" "$binary" -runs=0 "$corpus" >/dev/null 2>&1
    dict=(-dict="Fuzz/$target.dict")
    max_len=4096
    ;;
manifest)
    mkdir -p "$corpus"
    python3 Fuzz/seed_text.py "$corpus" Tests/HeraldBrokerTests/Support/Fixtures.swift \
        Tests/HeraldBrokerTests/ManifestParsingTests.swift Tests/HeraldBrokerTests/ManifestValidationTests.swift
    dict=(-dict=Fuzz/manifest.dict)
    ;;
services)
    mkdir -p "$corpus"
    python3 Fuzz/seed_text.py "$corpus" services.d/* Tests/HeraldConfigTests/ServiceFileTests.swift \
        Tests/HeraldConfigTests/FuzzRegressionTests.swift Tests/HeraldDaemonTests/ServiceFileTests.swift
    dict=(-dict=Fuzz/services.dict)
    ;;
*)
    echo "run.sh: unknown target '$target'" >&2
    exit 2
    ;;
esac
mkdir -p "$artifacts" "$out/logs"

log="$out/logs/$target-$(date +%Y%m%d-%H%M%S).log"
flags=(
    -max_total_time="$seconds"
    -max_len="$max_len"
    -timeout=10
    -rss_limit_mb=4096
    -print_final_stats=1
    "${dict[@]}"
    -artifact_prefix="$artifacts/"
)
fork="${FUZZ_FORK:-0}"
if [ "$fork" -gt 0 ]; then
    flags+=(-fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
# shellcheck disable=SC2206
extra=(${FUZZ_ARGS:-})

echo "fuzzing $target for ${seconds}s; log: $log" >&2
status=0
"$binary" "${flags[@]}" "${extra[@]}" "$corpus" >"$log" 2>&1 || status=$?

echo "---- final status and statistics ($log) ----"
grep -E '^stat::' "$log" || true
grep -E '^#[0-9]+' "$log" | tail -n 1 || true  # the last status line: executions, cov, ft, corpus, exec/s
grep -E 'Test unit written to|==ERROR|Fatal error|deadly signal|SUMMARY' "$log" || true
echo "corpus $corpus: $(find "$corpus" -type f | wc -l) files"
echo "crash artifacts in $artifacts/: $(find "$artifacts" -maxdepth 1 -type f | wc -l)"
exit "$status"
