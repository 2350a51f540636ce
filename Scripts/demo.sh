#!/usr/bin/env bash
# Shows Herald at work on a small virtual LAN: installs what is missing, builds Herald, starts heraldd on two
# hosts made of Linux network namespaces (never on this machine's own network), and shows what each host
# learns of the other. Run as root. Everything it creates is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (it builds a test LAN from network namespaces)" >&2; exit 77; }
command -v swift >/dev/null || { echo "demo: the Swift toolchain (swift) is not on PATH" >&2; exit 69; }
for tool in ip:iproute2 dig:dnsutils nft:nftables /usr/bin/python3:python3; do
    command -v "${tool%%:*}" >/dev/null || { apt-get update -qq && apt-get install -y -qq "${tool##*:}" >/dev/null; }
done

sh Scripts/install-build-deps.sh
# libnftables: heraldd loads it for kernel enforcement (the last part of the demo).
ldconfig -p | grep -q 'libnftables\.so\.1' || { apt-get update -qq && apt-get install -y -qq libnftables1 >/dev/null; }
echo "== building Herald (release; the first build takes a few minutes)"
build_log=$(mktemp /tmp/herald-demo-build.XXXXXX)
for product in heraldd herald; do
    swift build -c release --static-swift-stdlib --product "$product" >"$build_log" 2>&1 || { cat "$build_log" >&2; rm -f "$build_log"; exit 1; }
done
rm -f "$build_log"
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)

prefix="hdemo$$"
run_dir=$(mktemp -d /tmp/herald-demo.XXXXXX)
cleanup() {
    pkill -f "$run_dir" 2>/dev/null || true
    sleep 0.3
    for ns in "${prefix}a" "${prefix}b" "${prefix}lan"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$run_dir"
}
trap cleanup EXIT

echo "== a LAN of two hosts (network namespaces joined by a bridge)"
ip netns add "${prefix}lan"
ip -n "${prefix}lan" link add br0 type bridge
ip -n "${prefix}lan" link set br0 type bridge mcast_snooping 0
ip -n "${prefix}lan" link set br0 up
number=1
for host in a b; do
    ip netns add "${prefix}${host}"
    ip link add "${prefix}${host}0" type veth peer name "${prefix}${host}1"
    ip link set "${prefix}${host}0" netns "${prefix}${host}"
    ip link set "${prefix}${host}1" netns "${prefix}lan"
    ip -n "${prefix}lan" link set "${prefix}${host}1" master br0 up
    ip -n "${prefix}${host}" link set "${prefix}${host}0" name eth0
    ip -n "${prefix}${host}" link set lo up
    ip -n "${prefix}${host}" link set eth0 up
    ip -n "${prefix}${host}" addr add "10.214.0.${number}/24" dev eth0
    ip -n "${prefix}${host}" addr add "fd00:214::${number}/64" dev eth0 nodad
    ip -n "${prefix}${host}" route add 224.0.0.0/4 dev eth0
    number=$((number + 1))
done

echo "== heraldd on host 'alpha' (10.214.0.1) and host 'beta' (10.214.0.2)"
ip netns exec "${prefix}a" "$bin/heraldd" --hostname alpha --socket "$run_dir/alpha.sock" \
    --control-socket "$run_dir/alpha-control.sock" --state-dir "$run_dir/alpha-state" 2>"$run_dir/alpha.log" &
ip netns exec "${prefix}b" "$bin/heraldd" --hostname beta --socket "$run_dir/beta.sock" \
    --control-socket "$run_dir/beta-control.sock" --state-dir "$run_dir/beta-state" 2>"$run_dir/beta.log" &
beta_pid=$!
sleep 2
sed 's/^/   alpha: /' "$run_dir/alpha.log"

echo "== alpha advertises a web server:  herald register \"Alpha Web\" _http._tcp 8080 path=/ version=1"
DNSSD_UDS_PATH="$run_dir/alpha.sock" ip netns exec "${prefix}a" \
    "$bin/herald" register "Alpha Web" _http._tcp 8080 path=/ version=1 --subtype _printer >"$run_dir/register.out" 2>&1 &
sleep 1.5
sed 's/^/   alpha: /' "$run_dir/register.out"

echo "== beta browses and resolves it:  herald browse _http._tcp --resolve --timeout 3"
DNSSD_UDS_PATH="$run_dir/beta.sock" ip netns exec "${prefix}b" "$bin/herald" browse _http._tcp --resolve --timeout 3

echo "== beta looks up alpha's addresses:  herald lookup alpha.local"
DNSSD_UDS_PATH="$run_dir/beta.sock" ip netns exec "${prefix}b" "$bin/herald" lookup alpha.local

echo "== a one-shot query from dig (legacy unicast) is answered too"
ip netns exec "${prefix}b" dig +short +time=2 +tries=1 -p 5353 @10.214.0.1 "Alpha\\ Web._http._tcp.local" SRV

echo "== local-network privacy: an app must be registered, explain itself, and be granted by an operator"
echo "   (the app here is a copy of herald installed as $run_dir/tictactoe, run as the unprivileged user nobody)"
chmod 755 "$run_dir"
cp "$bin/herald" "$run_dir/tictactoe"
cat >"$run_dir/tictactoe.json" <<MANIFEST
{
  "id": "org.example.tictactoe",
  "name": "Tic Tac Toe",
  "executables": ["$run_dir/tictactoe"],
  "NSBonjourServices": ["_tictactoe._tcp"],
  "NSLocalNetworkUsageDescription": "Tic Tac Toe looks for players on your local network."
}
MANIFEST
beta_control=(--control-socket "$run_dir/beta-control.sock")
echo "   operator on beta:  herald app add tictactoe.json"
ip netns exec "${prefix}b" "$bin/herald" app add "$run_dir/tictactoe.json" "${beta_control[@]}" | sed 's/^/   /'
DNSSD_UDS_PATH="$run_dir/alpha.sock" ip netns exec "${prefix}a" \
    "$bin/herald" register "Alpha's Game" _tictactoe._tcp 4000 >/dev/null 2>&1 &
echo "   the app on beta:  tictactoe browse _tictactoe._tcp   (before any decision)"
ip netns exec "${prefix}b" setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$run_dir/tictactoe" browse _tictactoe._tcp --socket "$run_dir/beta.sock" --timeout 5 \
    >"$run_dir/app.out" 2>"$run_dir/app.err" &
app_pid=$!
sleep 1.5
sed 's/^/   app: /' "$run_dir/app.err"
echo "   operator on beta:  herald requests"
ip netns exec "${prefix}b" "$bin/herald" requests "${beta_control[@]}" | sed 's/^/   /'
echo "   operator on beta:  herald grant org.example.tictactoe"
ip netns exec "${prefix}b" "$bin/herald" grant org.example.tictactoe "${beta_control[@]}" | sed 's/^/   /'
wait "$app_pid" || true
echo "   what the still-running app printed after the grant:"
sed 's/^/   app: /' "$run_dir/app.out"

echo "== kernel enforcement ([permissions] enforcement = all): until its app is granted, a program reaches no"
echo "   device on the LAN by any path, not only through heraldd (docs/enforcement.md)"
echo "   alpha serves HTTP on 10.214.0.1:8080; beta's heraldd restarts with enforcement = all"
ip netns exec "${prefix}a" /usr/bin/python3 -m http.server 8080 --bind 10.214.0.1 --directory "$run_dir" >/dev/null 2>&1 &
kill "$beta_pid"
wait "$beta_pid" 2>/dev/null || true
printf '[permissions]\nenforcement = all\n' >"$run_dir/beta.conf"
# heraldd names cgroups, so its mount namespace needs the cgroup v2 hierarchy ('ip netns exec' mounts a fresh /sys),
# and a BPF file system where it pins its ingress program's links.
ip netns exec "${prefix}b" sh -c "mount -t cgroup2 none /sys/fs/cgroup && mount -t bpf bpf /sys/fs/bpf \
    && exec '$bin/heraldd' --config '$run_dir/beta.conf' \
    --hostname beta --socket '$run_dir/beta.sock' --control-socket '$run_dir/beta-control.sock' \
    --state-dir '$run_dir/beta-state'" 2>"$run_dir/beta-all.log" &
sleep 2
grep 'enforcement:' "$run_dir/beta-all.log" | sed 's/^/   beta: /'
fetch='import socket
try:
    socket.create_connection(("10.214.0.1", 8080), timeout=2).close(); print("connected to alpha:8080")
except OSError as e: print("cannot connect to alpha:8080:", e.strerror)'
echo "   on beta, a program of the user nobody, which no granted app covers:"
ip netns exec "${prefix}b" setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$fetch" \
    | sed 's/^/   nobody: /'
echo "   on beta, the same program as root (an operator, whom enforcement never holds back):"
ip netns exec "${prefix}b" /usr/bin/python3 -c "$fetch" | sed 's/^/   root: /'
echo "   operator on beta:  herald status"
ip netns exec "${prefix}b" "$bin/herald" status "${beta_control[@]}" | grep '^enforcement' | sed 's/^/   /'
