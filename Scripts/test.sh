#!/usr/bin/env bash
# Installs what the test suite needs (when missing), builds everything, and runs the whole suite.
# Run as root: the interoperability tests build a test LAN from network namespaces.
# The last line printed is the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x Scripts/install-test-deps.sh ] || [ -f Scripts/install-test-deps.sh ]; then
    bash Scripts/install-test-deps.sh
fi

echo "== building (debug, with tests)"
swift build --build-tests 2>&1 | grep -E "error|warning: unre|Compiling|Build complete" | grep -v "^\[" || true
swift build --build-tests >/dev/null

echo "== building the fuzz targets"
bash Fuzz/build.sh >/dev/null

echo "== running the tests"
swift test --skip-build 2>&1
