#!/usr/bin/env bash
# Builds the libFuzzer targets (libFuzzer + AddressSanitizer, optimized, with debug info) with SwiftPM into
# .build/fuzz/ (a scratch path of its own, so that the sanitizer flags never meet the ordinary build):
#   wire      wire-fuzzer      HeraldWire (DNS messages, names, TXT, NSEC bit maps)
#   ipc       ipc-fuzzer       HeraldIPC (app-socket frames, requests, replies)
#   control   control-fuzzer   HeraldControl (control-socket lines, requests, replies)
#   manifest  manifest-fuzzer  HeraldBroker's manifests (JSON and XML property lists)
#   services  services-fuzzer  HeraldConfig's service files (Avahi .service and systemd .dnssd files)
# Each is an executable target of Package.swift (Fuzz/<target>/), built with -DFUZZING so that libFuzzer drives it;
# the binary is copied to .build/fuzz/<target>-fuzzer, where Fuzz/run.sh looks for it.
#
# Usage: Fuzz/build.sh [TARGET...]      (no target: all of them; from any directory)
#   SWIFT=/path/to/swift                to use another toolchain (default: swift on PATH)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

swift="${SWIFT:-swift}"
out=".build/fuzz"
all_targets=(wire ipc control manifest services)

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then targets=("${all_targets[@]}"); fi
for target in "${targets[@]}"; do
    case " ${all_targets[*]} " in
    *" $target "*) ;;
    *) echo "build.sh: unknown target '$target' (known: ${all_targets[*]})" >&2; exit 2 ;;
    esac
done

flags=(-c release --scratch-path "$out"
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -g)
# lld links ASan binaries without gold's flood of "Cannot export local symbol" warnings.
if [ -x "$(dirname "$(command -v "$swift")")/ld.lld" ] || command -v ld.lld >/dev/null 2>&1; then
    flags+=(-Xswiftc -use-ld=lld)
fi
for target in "${targets[@]}"; do
    echo "building $out/$target-fuzzer" >&2
    "$swift" build "${flags[@]}" --product "$target-fuzzer"
    binary="$("$swift" build "${flags[@]}" --show-bin-path)/$target-fuzzer"
    cp -f "$binary" "$out/$target-fuzzer"
    echo "built $out/$target-fuzzer" >&2
done
