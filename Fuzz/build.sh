#!/usr/bin/env bash
# Builds the HeraldWire libFuzzer target: .build/fuzz/wire-fuzzer (libFuzzer + AddressSanitizer, optimized).
# The target is compiled into the HeraldWire module itself, so it sees the same code the package builds.
# Usage: Fuzz/build.sh            (from any directory)
#   SWIFTC=/path/to/swiftc        to use another compiler (default: swiftc on PATH)
#   FUZZ_SOURCES=dir              to fuzz another copy of Sources/HeraldWire (for example an older commit)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

swiftc="${SWIFTC:-swiftc}"
sources="${FUZZ_SOURCES:-Sources/HeraldWire}"
out=".build/fuzz"
mkdir -p "$out"

shopt -s nullglob
originals=("$sources"/*.swift)
if [ "${#originals[@]}" -eq 0 ]; then
    echo "build.sh: no Swift sources in $sources" >&2
    exit 1
fi
# Compile a snapshot, so that files edited while the compiler runs cannot break the build.
snapshot="$out/src"
rm -rf "$snapshot"
mkdir -p "$snapshot"
cp "${originals[@]}" Fuzz/WireFuzzer.swift "$snapshot/"
files=("$snapshot"/*.swift)

# lld links ASan binaries without gold's flood of "Cannot export local symbol" warnings.
linker=()
if [ -x "$(dirname "$(command -v "$swiftc")")/ld.lld" ] || command -v ld.lld >/dev/null 2>&1; then
    linker=(-use-ld=lld)
fi

echo "building $out/wire-fuzzer from $sources (${#originals[@]} files) and Fuzz/WireFuzzer.swift" >&2
"$swiftc" -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 \
    -module-name HeraldWire "${files[@]}" \
    -module-cache-path "$out/module-cache" "${linker[@]}" \
    -o "$out/wire-fuzzer"
echo "built $out/wire-fuzzer (sources snapshot: $(cat "${files[@]}" | sha1sum | cut -c1-12))" >&2
