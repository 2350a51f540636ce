#!/usr/bin/env bash
# The cost of kernel enforcement (docs/enforcement.md), on a LAN of two network namespaces joined by a veth pair:
#   1. the time to build and to load the rules of APPS registered apps (each in a cgroup of its own);
#   2. TCP connection set-up (connect + close, 2,000 times) and UDP send throughput (1,200-byte datagrams for 2 s)
#      from a granted app to the peer, without the table and with it. The app's cgroup is the last granted one in
#      the rules, so each of its packets is compared with every app's cgroup before it: the worst case.
#   3. the cgroup ingress program (docs/enforcement.md, "Incoming multicast and broadcast"): 64-byte UDP datagrams
#      sent for 2 s from the peer to a socket of the app's cgroup (owned by nobody, not an operator), unicast (which
#      the program passes), to the subnet's broadcast address and to a multicast group (which it drops), without
#      the program, with it attached to the app's cgroup, and with it on the cgroup's parent too (the shape of
#      `all` mode, where a packet meets two programs). It is attached by herald-enforcement-benchmark
#      attach-ingress, which loads it through heraldd's shim; kernel.bpf_stats_enabled is 1 while it is attached
#      (and set back after), so that the kernel counts the program's runs and their time.
#   4. the moved-socket programs at the hierarchy's root: the same TCP set-up and UDP sends as in 2, without them,
#      with them (the app's cgroup open), and with the app's cgroup held (herald-enforcement-benchmark attach-moved).
# A benchmark, not a test: it prints figures. Runs as root; needs ip, nsenter, nft and python3, and a build of
# herald-enforcement-benchmark (swift build --product herald-enforcement-benchmark).
# Usage: Benchmarks/enforcement.sh [APPS]     (default 1000)
set -euo pipefail
apps=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
builder=""
for candidate in "$root/.build/release/herald-enforcement-benchmark" "$root/.build/debug/herald-enforcement-benchmark"; do
    if [ -x "$candidate" ]; then builder=$candidate; break; fi
done
[ -n "$builder" ] || { echo "enforcement.sh: build herald-enforcement-benchmark first" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "enforcement.sh: needs root (namespaces, cgroups, nft)" >&2; exit 2; }

# The cgroup v2 hierarchy, and where it lies below /sys/fs/cgroup (where nft looks cgroups up).
mnt=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup2" && $4 == "/") print $5; break } }' /proc/self/mountinfo | head -1)
[ -n "$mnt" ] || { echo "enforcement.sh: no cgroup v2 hierarchy mounted" >&2; exit 2; }
prefix=${mnt#/sys/fs/cgroup}; prefix=${prefix#/}

id=$$
a=hbench$id-a
b=hbench$id-b
parent=herald-bench-$id
work=$(mktemp -d)
peer_pid=""
receiver_pid=""
attach_pid=""
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo "")
cleanup() {
    [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null || true
    [ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null || true
    [ -n "$attach_pid" ] && kill "$attach_pid" 2>/dev/null || true
    [ -n "$stats_before" ] && echo "$stats_before" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true
    ip netns del "$a" 2>/dev/null || true
    ip netns del "$b" 2>/dev/null || true
    sleep 0.2
    for dir in "$mnt/$parent"/*/; do [ -d "$dir" ] && rmdir "$dir" 2>/dev/null || true; done
    rmdir "$mnt/$parent" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# Interrupted: exit, so that the EXIT trap cleans up.
trap 'exit 130' INT TERM

mkdir "$mnt/$parent"
for ((i = 0; i < apps; i++)); do mkdir "$mnt/$parent/app-$i.service"; done
# The measuring app: the last granted one (even indexes are granted).
last=$(( (apps - 1) / 2 * 2 ))
app_cgroup=$mnt/$parent/app-$last.service

ip netns add "$a"
ip netns add "$b"
ip link add va netns "$a" type veth peer name vb netns "$b"
ip -n "$a" addr add 10.77.0.1/24 dev va
ip -n "$b" addr add 10.77.0.2/24 dev vb
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set va up
ip -n "$b" link set vb up
# nsenter --net keeps this mount namespace (ip netns exec would mount another /sys, without the cgroups).
in_a() { nsenter --net="/run/netns/$a" "$@"; }

cat >"$work/peer.py" <<'PY'
import socket, threading
def tcp():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.77.0.2", 9000)); s.listen(1024)
    while True:
        c, _ = s.accept(); c.close()
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.77.0.2", 9001))
    while True: s.recv(2048)
threading.Thread(target=tcp, daemon=True).start()
threading.Thread(target=udp, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
PY
cat >"$work/client.py" <<'PY'
import socket, statistics, time
samples = []
for _ in range(2000):
    start = time.perf_counter_ns()
    s = socket.create_connection(("10.77.0.2", 9000)); s.close()
    samples.append((time.perf_counter_ns() - start) / 1000)
samples.sort()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(("10.77.0.2", 9001))
payload = b"x" * 1200; sent = 0; end = time.perf_counter() + 2
while time.perf_counter() < end:
    for _ in range(100):
        s.send(payload); sent += 1
print("tcp connect+close: median %.1f us, p99 %.1f us; udp send: %.0f datagrams/s (%.0f MB/s)" % (
    statistics.median(samples), samples[int(len(samples) * 0.99)], sent / 2, sent * 1200 / 2 / 1e6))
PY
nsenter --net="/run/netns/$b" python3 -u "$work/peer.py" >"$work/peer.log" 2>&1 &
peer_pid=$!
for _ in $(seq 50); do grep -q ready "$work/peer.log" 2>/dev/null && break; sleep 0.1; done

measure() { sh -c "echo \$\$ > '$app_cgroup/cgroup.procs' && exec nsenter --net=/run/netns/$a python3 '$work/client.py'"; }

echo "== $apps apps ($(nproc) cores; $(uname -r); $(nft --version))"
"$builder" "$apps" "$parent" "$prefix" >"$work/rules.nft" 2>"$work/build.log"
cp "$work/rules.nft" "$work/rules-first.nft"
cat "$work/build.log"
loads=()
for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    in_a nft -f "$work/rules-first.nft"
    loads+=($(( ($(date +%s%N) - start) / 1000 )))
done
sorted=$(printf '%s\n' "${loads[@]}" | sort -n | tr '\n' ' ')
echo "load (nft -f, one transaction replacing the table): ${sorted}us (median $(printf '%s\n' "${loads[@]}" | sort -n | sed -n 3p) us)"
echo "rules naming a cgroup: $(grep -c 'socket cgroupv2' "$work/rules.nft")"
lists=()
for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    in_a nft list counters table inet herald >/dev/null
    lists+=($(( ($(date +%s%N) - start) / 1000 )))
done
echo "reading the counters (nft list counters, as heraldd does every 0.5 s): median $(printf '%s\n' "${lists[@]}" | sort -n | sed -n 3p) us"
# What connection tracking costs: the same table without the one rule that uses it (DNS replies), measured first,
# while no rule of this namespace has turned connection tracking on.
sed 's/ ct state established//' "$work/rules.nft" >"$work/rules-no-ct.nft"
in_a nft -f "$work/rules-no-ct.nft"
echo "-- with the table less its connection-tracking rule"
measure
in_a nft -f "$work/rules.nft"
echo "-- with the table (the app granted, its accept rule after those of the $((last / 2)) other granted apps)"
measure
in_a nft delete table inet herald
echo "-- without the table"
measure

# 3. The cgroup ingress program, with the table gone: what the program alone costs.
cat >"$work/receiver.py" <<'PY'
# Receives in the app's cgroup for SECONDS, as nobody (the program lets operators' sockets, root's, through).
import os, socket, sys, time
os.setgroups([]); os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("0.0.0.0", 9002))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("239.77.0.1") + socket.inet_aton("10.77.0.1"))
s.settimeout(0.2)
print("ready", flush=True)
received = 0; end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try:
        while True:
            s.recv(2048); received += 1
    except socket.timeout:
        pass
print("received", received, flush=True)
PY
cat >"$work/sender.py" <<'PY'
# Sends 64-byte datagrams for 2 s to the app's namespace: unicast, broadcast or multicast.
import socket, sys, time
kind = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.2", 0))
target = {"unicast": "10.77.0.1", "broadcast": "10.77.0.255", "multicast": "239.77.0.1"}[kind]
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("10.77.0.2"))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
s.connect((target, 9002))
payload = b"x" * 64; sent = 0; start = time.perf_counter(); end = start + 2
while time.perf_counter() < end:
    for _ in range(100):
        s.send(payload); sent += 1
print("sent", sent, time.perf_counter() - start, flush=True)
PY
# One kind of datagram: the sender's rate, and what the socket of the app's cgroup received of it.
ingress_measure() {
    local kind=$1
    sh -c "echo \$\$ > '$app_cgroup/cgroup.procs' && exec nsenter --net=/run/netns/$a python3 -u '$work/receiver.py' 3.5" \
        >"$work/receiver.log" 2>&1 &
    receiver_pid=$!
    for _ in $(seq 50); do grep -q ready "$work/receiver.log" 2>/dev/null && break; sleep 0.1; done
    grep -q ready "$work/receiver.log" || { echo "enforcement.sh: the receiver did not start" >&2; cat "$work/receiver.log" >&2; exit 1; }
    local sent seconds received
    read -r _ sent seconds < <(nsenter --net="/run/netns/$b" python3 "$work/sender.py" "$kind")
    wait "$receiver_pid"
    receiver_pid=""
    received=$(awk '/^received/ { print $2 }' "$work/receiver.log")
    awk -v k="$kind" -v s="$sent" -v t="$seconds" -v r="$received" 'BEGIN {
        printf "%-9s sent %7.0f datagrams/s, received %7.0f/s (%.1f%%)\n", k, s / t, r / t, 100 * r / s }'
}
# Runs `herald-enforcement-benchmark MODE ARGUMENT...` (attach-ingress or attach-moved) from the app's namespace,
# whose sockets the programs judge, with the kernel counting the programs' runs; runs the command given after `--`
# while they are attached, detaches them, and says how often they ran and for how long.
with_attached() {
    local mode=$1; shift
    local arguments=()
    while [ "$1" != "--" ]; do arguments+=("$1"); shift; done
    shift
    echo 1 >/proc/sys/kernel/bpf_stats_enabled
    nsenter --net="/run/netns/$a" "$builder" "$mode" "${arguments[@]}" >"$work/attach.log" 2>&1 &
    attach_pid=$!
    for _ in $(seq 50); do grep -q attached "$work/attach.log" 2>/dev/null && break; sleep 0.1; done
    grep -q attached "$work/attach.log" || { echo "enforcement.sh: $mode failed" >&2; cat "$work/attach.log" >&2; exit 1; }
    "$@"
    kill -TERM "$attach_pid"
    wait "$attach_pid" || true
    attach_pid=""
    echo "$stats_before" >/proc/sys/kernel/bpf_stats_enabled
    grep -v '^attached' "$work/attach.log" | sed "s/^$mode: /          program: /"
}
# The ingress program attached to the given cgroups, for one kind of datagram.
ingress_attached() {
    local kind=$1; shift
    with_attached attach-ingress "$@" -- ingress_measure "$kind"
}
echo "== the cgroup ingress program: 64-byte UDP datagrams from the peer to a socket in the app's cgroup, 2 s each"
echo "-- without the program"
for kind in unicast broadcast multicast; do ingress_measure "$kind"; done
echo "-- with the program attached to the app's cgroup"
for kind in unicast broadcast multicast; do ingress_attached "$kind" "$app_cgroup"; done
echo "-- with the program attached to the app's cgroup and to its parent (two programs run for each packet)"
for kind in unicast broadcast multicast; do ingress_attached "$kind" "$app_cgroup" "$mnt/$parent"; done

# 4. The moved-socket programs (docs/enforcement.md, "Sockets made before a process moved"), with the table gone:
# six programs at the hierarchy's root, which run for every socket of the machine at creation, release, connect()
# and addressed sendmsg(). With the app's cgroup open (as every cgroup no app names, in `registered` mode), the
# connect program stops after one map lookup; with it held, a new socket's origin is looked up as well (and found
# to be the caller's own cgroup, so the call passes, as the programs leave new sockets to the rules).
moved_attached() { with_attached attach-moved "$mnt" "$@" -- measure; }
echo "== the moved-socket programs: the app's TCP set-up and UDP sends (connected, so not judged by them)"
echo "-- without the programs"
measure
echo "-- with the programs at the root, the app's cgroup open"
moved_attached
echo "-- with the programs at the root, the app's cgroup held"
moved_attached "$app_cgroup"
