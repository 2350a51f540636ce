#!/usr/bin/env bash
# The soak with churn at full length: peers' services come and go every 100 ms, apps connect, browse, register
# and disconnect, and an operator grants, denies and resets them, for SECONDS (default 600); then it checks that
# no clients, operations, registrations or cached records were leaked, that the daemon's live heap (`herald status`)
# stayed within 10 % of its size after warm-up and its private resident memory within 25 %; the resident set is
# reported beside them. The test suite runs the same test for 60 s. Run as root (it builds a test LAN).
#
#   bash Benchmarks/Endurance/soak.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
bash Scripts/install-test-deps.sh >/dev/null
swift build --build-tests >/dev/null
HERALD_SOAK_SECONDS=$seconds swift test --skip-build --filter SoakTests 2>&1 | grep -E "^soak|Test run"
