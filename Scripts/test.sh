#!/usr/bin/env bash
# Installs what the test suite needs (when missing), builds everything, and runs the whole suite.
# Run as root: the interoperability tests build a test LAN from network namespaces.
# The last line printed is the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

bash Scripts/install-test-deps.sh

echo "== checking the formatting (swift format lint --strict, configuration in .swift-format)"
format_log=$(mktemp /tmp/herald-format.XXXXXX)
if ! swift format lint --strict --parallel -r Package.swift Sources Tests Examples Benchmarks Fuzz >"$format_log" 2>&1; then
    cat "$format_log"
    echo "formatting: run \`swift format -i -r --parallel Package.swift Sources Tests Examples Benchmarks Fuzz\` and fix what it leaves"
    rm -f "$format_log"
    exit 1
fi
echo "formatting: clean"
rm -f "$format_log"

echo "== building (debug, with tests)"
build_log=$(mktemp /tmp/herald-build.XXXXXX)
if ! swift build --build-tests >"$build_log" 2>&1; then
    cat "$build_log"
    rm -f "$build_log"
    exit 1
fi
tail -n 1 "$build_log"
rm -f "$build_log"

echo "== building libdns_sd.so.1"
bash Scripts/build-libdns_sd.sh

echo "== checking the systemd units (systemd-analyze verify and security)"
units_log=$(mktemp /tmp/herald-units.XXXXXX)
if ! HERALDD_BINARY="$(swift build --show-bin-path)/heraldd" bash systemd/check-units.sh >"$units_log" 2>&1; then
    cat "$units_log"
    rm -f "$units_log"
    exit 1
fi
grep -E "exposure|all checks passed" "$units_log" | tail -n 2
rm -f "$units_log"

echo "== building heraldd and herald as they are installed (release, Swift runtime linked in)"
release_log=$(mktemp /tmp/herald-release.XXXXXX)
for product in heraldd herald; do
    if ! swift build -c release --static-swift-stdlib --product "$product" >"$release_log" 2>&1; then
        cat "$release_log"
        rm -f "$release_log"
        exit 1
    fi
done
tail -n 1 "$release_log"
rm -f "$release_log"

echo "== building the fuzz targets"
bash Fuzz/build.sh >/dev/null

echo "== running the tests"
swift test --skip-build 2>&1
