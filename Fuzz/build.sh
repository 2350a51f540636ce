#!/usr/bin/env bash
# Builds the libFuzzer targets (libFuzzer + AddressSanitizer, optimized) into .build/fuzz/:
#   wire      wire-fuzzer      Sources/HeraldWire (DNS messages, names, TXT, NSEC bit maps)
#   ipc       ipc-fuzzer       Sources/HeraldIPC (app-socket frames, requests, replies)
#   control   control-fuzzer   Sources/HeraldControl (control-socket lines, requests, replies)
#   manifest  manifest-fuzzer  Sources/HeraldBroker/Manifest (+ Identity/SHA256.swift, SystemdUnit.swift)
#   services  services-fuzzer  Sources/HeraldDaemon/ServiceFiles (Avahi .service and systemd .dnssd files)
# Each target is compiled into the module it fuzzes (its file sits next to the module's sources), so the
# sources need no changes and the target sees the same code the package builds. Modules a target imports
# (HeraldWire; for manifest and services, HeraldXML, which reads XML with the system's libexpat) are built first,
# with the same flags, and linked.
#
# Usage: Fuzz/build.sh [TARGET...]      (no target: all of them; from any directory)
#   SWIFTC=/path/to/swiftc              to use another compiler (default: swiftc on PATH)
#   FUZZ_SOURCES=dir                    for the wire target: fuzz another copy of Sources/HeraldWire
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

swiftc="${SWIFTC:-swiftc}"
out=".build/fuzz"
all_targets=(wire ipc control manifest services)
mkdir -p "$out"
shopt -s nullglob

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then targets=("${all_targets[@]}"); fi
for target in "${targets[@]}"; do
    case " ${all_targets[*]} " in
    *" $target "*) ;;
    *) echo "build.sh: unknown target '$target' (known: ${all_targets[*]})" >&2; exit 2 ;;
    esac
done

# lld links ASan binaries without gold's flood of "Cannot export local symbol" warnings.
linker=()
if [ -x "$(dirname "$(command -v "$swiftc")")/ld.lld" ] || command -v ld.lld >/dev/null 2>&1; then
    linker=(-use-ld=lld)
fi
# Sources/CExpat holds the module map of libexpat (linked with -lexpat), which HeraldXML imports.
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -module-cache-path "$out/module-cache"
       -I Sources/CExpat)

# Copies files into a fresh snapshot directory, so that files edited while the compiler runs cannot break the
# build; prints nothing, sets `files` to the copies.
snapshot() {
    local dir="$1"
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    local source
    for source in "$@"; do
        [ -f "$source" ] || { echo "build.sh: missing source $source" >&2; exit 1; }
        # Keep the relative path flat but unique (two modules may both have a file called Manifest.swift).
        cp "$source" "$dir/$(echo "$source" | tr / _)"
    done
    files=("$dir"/*.swift)
}

# build_module NAME SOURCE...: NAME as a module (object + .swiftmodule in $out/modules) for the targets that
# import it; built once per run.
built_modules=" "
build_module() {
    local name="$1"
    shift
    case "$built_modules" in *" $name "*) return ;; esac
    snapshot "$out/src/$name-module" "$@"
    mkdir -p "$out/modules"
    echo "building the $name module for the other targets ($# files)" >&2
    "$swiftc" "${flags[@]}" -module-name "$name" -wmo -emit-module \
        -emit-module-path "$out/modules/$name.swiftmodule" -c "${files[@]}" -o "$out/modules/$name.o"
    built_modules="$built_modules$name "
}
build_wire_module() { build_module HeraldWire Sources/HeraldWire/*.swift; }
build_xml_module() { build_module HeraldXML Sources/HeraldXML/*.swift; }

# link TARGET MODULE [extra objects...]: compiles `files` as MODULE with the fuzz target inside, into
# $out/TARGET-fuzzer.
link() {
    local target="$1" module="$2"
    shift 2
    echo "building $out/$target-fuzzer (module $module, ${#files[@]} files)" >&2
    "$swiftc" "${flags[@]}" -module-name "$module" -I "$out/modules" "${files[@]}" "$@" "${linker[@]}" \
        -o "$out/$target-fuzzer"
    echo "built $out/$target-fuzzer (sources snapshot: $(cat "${files[@]}" | sha1sum | cut -c1-12))" >&2
}

for target in "${targets[@]}"; do
    case "$target" in
    wire)
        sources="${FUZZ_SOURCES:-Sources/HeraldWire}"
        originals=("$sources"/*.swift)
        if [ "${#originals[@]}" -eq 0 ]; then
            echo "build.sh: no Swift sources in $sources" >&2
            exit 1
        fi
        snapshot "$out/src/wire" "${originals[@]}" Fuzz/WireFuzzer.swift
        link wire HeraldWire
        ;;
    ipc)
        build_wire_module
        snapshot "$out/src/ipc" Sources/HeraldIPC/*.swift Fuzz/IPCFuzzer.swift Fuzz/Support/FuzzSupport.swift
        link ipc HeraldIPC "$out/modules/HeraldWire.o"
        ;;
    control)
        snapshot "$out/src/control" Sources/HeraldControl/*.swift Fuzz/ControlFuzzer.swift \
            Fuzz/Support/FuzzSupport.swift
        link control HeraldControl
        ;;
    manifest)
        build_wire_module
        build_xml_module
        snapshot "$out/src/manifest" Sources/HeraldBroker/Manifest/*.swift Sources/HeraldBroker/Identity/SHA256.swift \
            Sources/HeraldBroker/Identity/SystemdUnit.swift \
            Fuzz/ManifestFuzzer.swift Fuzz/Support/FuzzSupport.swift
        link manifest HeraldBroker "$out/modules/HeraldWire.o" "$out/modules/HeraldXML.o" -lexpat
        ;;
    services)
        build_wire_module
        build_xml_module
        snapshot "$out/src/services" Sources/HeraldDaemon/ServiceFiles/AvahiServiceFile.swift \
            Sources/HeraldDaemon/ServiceFiles/SystemdDNSSDFile.swift Sources/HeraldDaemon/ServiceFiles/SystemdSpecifiers.swift \
            Sources/HeraldDaemon/ServiceFiles/StaticService.swift \
            Fuzz/ServiceFileFuzzer.swift Fuzz/Support/FuzzSupport.swift
        link services HeraldDaemon "$out/modules/HeraldWire.o" "$out/modules/HeraldXML.o" -lexpat
        ;;
    esac
done
