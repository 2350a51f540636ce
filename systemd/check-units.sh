#!/usr/bin/env bash
# Checks Herald's systemd files:
#   1. systemd-analyze verify on heraldd.service and both socket units;
#   2. systemd-sysusers and systemd-tmpfiles applied to a scratch root;
#   3. systemd-analyze security --offline=yes, failing above an exposure of 2.0;
#   4. the same with the kernel enforcement drop-in (heraldd-enforcement.conf) installed, also at most 2.0, and that
#      the drop-in gives CAP_BPF and allows bpf(2);
#   5. that the unit's system-call filter allows userfaultfd(2).
#
# `verify` insists that ExecStart= names an existing executable. The shipped unit names the
# installed path, /usr/local/bin/heraldd, which a build machine does not have, so verify runs on a
# copy whose ExecStart= points at a built heraldd (and nothing else changed: the script checks that
# the copy differs from the shipped unit in that one line only). The binary is $HERALDD_BINARY, else
# the first of .build-sysd, .build (release, then debug) that exists.
#
# Usage: systemd/check-units.sh          (exit 0 when every check passes)
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
max_exposure=${MAX_EXPOSURE:-2.0}
installed_binary=/usr/local/bin/heraldd
units=(heraldd.service heraldd-dnssd.socket heraldd-control.socket)
failed=0

binary=${HERALDD_BINARY:-}
if [ -z "$binary" ]; then
    for candidate in .build-sysd/release .build-sysd/debug .build/release .build/debug; do
        if [ -x "$root/$candidate/heraldd" ]; then binary=$root/$candidate/heraldd; break; fi
    done
fi
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "check-units: no built heraldd found; run swift build or set HERALDD_BINARY" >&2
    exit 2
fi
command -v systemd-analyze >/dev/null || { echo "check-units: systemd-analyze is not installed" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/units"
for unit in "${units[@]}"; do cp "$here/$unit" "$scratch/units/$unit"; done

if ! grep -qx "ExecStart=$installed_binary" "$here/heraldd.service"; then
    echo "FAIL: heraldd.service does not have ExecStart=$installed_binary"; failed=1
fi
sed -i "s|^ExecStart=$installed_binary\$|ExecStart=$binary|" "$scratch/units/heraldd.service"
changed=$(diff "$here/heraldd.service" "$scratch/units/heraldd.service" | grep -c '^[<>]')
if [ "$changed" != 2 ]; then
    echo "FAIL: the verify copy differs from heraldd.service in more than ExecStart="; failed=1
fi

echo "== systemd-analyze verify (ExecStart=$binary in the copy)"
verify_output=$(cd "$scratch/units" && systemd-analyze verify "${units[@]/#/$scratch/units/}" 2>&1)
verify_status=$?
if [ -n "$verify_output" ]; then printf '%s\n' "$verify_output"; fi
if [ $verify_status -ne 0 ] || [ -n "$verify_output" ]; then
    echo "FAIL: verify (status $verify_status; any message counts as a failure)"; failed=1
else
    echo "ok: ${units[*]}"
fi

echo "== systemd-sysusers and systemd-tmpfiles in a scratch root"
mkdir -p "$scratch/root/etc"
if systemd-sysusers --root="$scratch/root" "$here/herald.sysusers" >"$scratch/sysusers.log" 2>&1 \
    && grep -q '^herald:x:[0-9]*:[0-9]*:.*:/var/lib/herald:/usr/sbin/nologin$' "$scratch/root/etc/passwd" \
    && grep -q '^herald:x:' "$scratch/root/etc/group"; then
    echo "ok: herald.sysusers ($(grep '^herald:' "$scratch/root/etc/passwd"))"
else
    cat "$scratch/sysusers.log"; echo "FAIL: herald.sysusers"; failed=1
fi
if systemd-tmpfiles --root="$scratch/root" --create "$here/herald.tmpfiles" >"$scratch/tmpfiles.log" 2>&1; then
    herald_uid=$(awk -F: '$1 == "herald" { print $3 }' "$scratch/root/etc/passwd")
    expect() { # path mode owner-uid
        local actual; actual=$(stat -c '%a %u' "$scratch/root$1" 2>/dev/null)
        if [ "$actual" != "$2 $3" ]; then echo "FAIL: $1 is '$actual', expected '$2 $3'"; failed=1; fi
    }
    expect /run/herald 755 "$herald_uid"
    expect /var/lib/herald 700 "$herald_uid"
    expect /etc/herald 755 0
    expect /etc/herald/apps.d 755 0
    expect /etc/herald/services.d 755 0
    echo "ok: herald.tmpfiles"
else
    cat "$scratch/tmpfiles.log"; echo "FAIL: herald.tmpfiles"; failed=1
fi

echo "== systemd-analyze security --offline=yes heraldd.service"
security_output=$(systemd-analyze security --no-pager --offline=yes "$here/heraldd.service" 2>&1)
security_status=$?
printf '%s\n' "$security_output" | grep -E '^✗|Overall exposure'
exposure=$(printf '%s\n' "$security_output" | sed -n 's/.*Overall exposure level for heraldd.service: \([0-9.]*\).*/\1/p')
if [ $security_status -ne 0 ] || [ -z "$exposure" ]; then
    echo "FAIL: systemd-analyze security (status $security_status)"; failed=1
elif awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e > m) }'; then
    echo "FAIL: exposure $exposure is above $max_exposure"; failed=1
else
    echo "ok: exposure $exposure (at most $max_exposure)"
fi

echo "== systemd-analyze security with the enforcement drop-in (CAP_NET_ADMIN, CAP_BPF, bpf(2))"
dropin_root="$scratch/dropin-root"
mkdir -p "$dropin_root/etc/systemd/system/heraldd.service.d"
cp "$here/heraldd.service" "$dropin_root/etc/systemd/system/"
cp "$here/heraldd-enforcement.conf" "$dropin_root/etc/systemd/system/heraldd.service.d/enforcement.conf"
dropin_output=$(systemd-analyze security --no-pager --offline=yes --root="$dropin_root" heraldd.service 2>&1)
dropin_status=$?
dropin_exposure=$(printf '%s\n' "$dropin_output" | sed -n 's/.*Overall exposure level for heraldd.service: \([0-9.]*\).*/\1/p')
if [ $dropin_status -ne 0 ] || [ -z "$dropin_exposure" ]; then
    printf '%s\n' "$dropin_output" | tail -5; echo "FAIL: systemd-analyze security with the drop-in"; failed=1
elif ! printf '%s\n' "$dropin_output" | grep -q '✗ CapabilityBoundingSet=~CAP_NET_ADMIN'; then
    echo "FAIL: the drop-in was not applied (CAP_NET_ADMIN not seen)"; failed=1
elif ! printf '%s\n' "$dropin_output" | grep -q '✗ CapabilityBoundingSet=~CAP_BPF' ||
     ! printf '%s\n' "$dropin_output" | grep -q 'bpf is allowed'; then
    echo "FAIL: the drop-in does not give CAP_BPF and the bpf(2) system call (the ingress program needs both)"; failed=1
elif awk -v e="$dropin_exposure" -v m="$max_exposure" 'BEGIN { exit !(e > m) }'; then
    echo "FAIL: exposure with the drop-in $dropin_exposure is above $max_exposure"; failed=1
else
    echo "ok: exposure with the drop-in $dropin_exposure (at most $max_exposure)"
fi

echo "== the system calls heraldd.service allows"
# heraldd has the kernel map its file pages one at a time through userfaultfd(2); without it, it works but keeps
# megabytes more resident. The calls that entries of a filter name (groups expanded, nested ones too), one per line:
calls_of() {
    local entry listing
    for entry in "$@"; do
        case "$entry" in
            @*) listing=$(systemd-analyze syscall-filter "$entry") || { echo "systemd-analyze cannot list $entry" >&2; return 1; }
                calls_of $(printf '%s\n' "$listing" | tail -n +2 | grep -v '^[[:space:]]*#') || return 1 ;;
            *) echo "$entry" ;;
        esac
    done
}
# The unit's SystemCallFilter= lines: allowed entries, and denied ones (after "~").
filters=$(sed -n 's/^SystemCallFilter=//p' "$here/heraldd.service")
if ! allowed_calls=$(calls_of $(printf '%s\n' "$filters" | grep -v '^~')) ||
   ! denied_calls=$(calls_of $(printf '%s\n' "$filters" | sed -n 's/^~//p')); then
    echo "FAIL: the system-call groups of heraldd.service could not be listed"; failed=1
elif printf '%s\n' "$allowed_calls" | grep -qx userfaultfd && ! printf '%s\n' "$denied_calls" | grep -qx userfaultfd; then
    echo "ok: userfaultfd (SystemCallFilter=$(printf '%s' "$filters" | tr '\n' ';'))"
else
    echo "FAIL: heraldd.service's SystemCallFilter= does not allow userfaultfd on this systemd"; failed=1
fi

if [ $failed -ne 0 ]; then echo "check-units: FAILED"; exit 1; fi
echo "check-units: all checks passed"
