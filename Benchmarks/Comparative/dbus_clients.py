"""The D-Bus benchmark: Avahi's D-Bus API (org.freedesktop.Avahi) served by heraldd and by avahi-daemon, in one run.

INSTANCES instances of TYPES types (`_bench0._tcp` …) are advertised by python-zeroconf on four peer hosts, and a
fifth peer advertises one instance of each of 2 × TRIALS more types (`_first0._tcp` …), registered (probed and
announced) before either daemon starts, so neither has them cached. On the daemon's host, a system bus of the
host's own (a `dbus-daemon` in the host's namespaces: for Herald with the bus's default policy and Herald's
`dbus/herald-avahi.conf`, for Avahi Debian's system bus configuration), then for each daemon in turn, Herald first:

(a) browse → first ItemNew: one libavahi-client process makes TRIALS service browsers one after another, each of
    a type no browser asked for before (the cache is cold by the type, the daemon is not restarted), and times
    each from the creation call to its first ItemNew;
(b) resolve all: a daemon started for it (nothing cached); one libavahi-client process resolves every instance
    by name (ServiceResolverNew, IPv4) keeping at most WINDOW resolvers in flight and freeing each after its
    Found or Failure. The daemon's CPU time (its processes' utime + stime) and peak RSS (VmHWM, reset through
    /proc/PID/clear_refs just before, Avahi's two processes summed) are read from /proc around it, and so are
    the bus's CPU time; the client reports its own;
(c) the same resolves once more on the same daemon, right after (b), with what (b) left in its cache.

Both daemons cap a client at 1,024 objects (Avahi 0.8: DEFAULT_OBJECTS_PER_CLIENT_MAX in
avahi-daemon/dbus-internal.h, `objects-per-client-max`; Herald: docs/dbus-api.md), so 2,000 resolvers cannot all
be open at once: the window is what a well-behaved client keeps.

The client is avahi_client_bench.c, built here with `cc` against libavahi-client (libavahi-client-dev): the
library CUPS, PipeWire and gvfs use, so the figures include exactly the work such a program causes, and a C
client adds little time of its own to either daemon's figures.
"""

import os
import subprocess
import sys
import time

from daemons import REPO, Avahi, Herald, cpu_of, cpu_seconds, rss_kib
from lan import LAN
from stats import ratio, summary

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "peers")
CLIENT_SOURCE = os.path.join(HERE, "avahi_client_bench.c")
POLICY = os.path.join(REPO, "dbus", "herald-avahi.conf")
BUS_SOCKET = "/run/dbus/system_bus_socket"


def log(text):
    print(text, flush=True)


def build_client(directory):
    """Compiles the libavahi-client program into `directory`; returns its path."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "avahi-client"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    if flags.returncode != 0:
        raise SystemExit("the dbus benchmark needs libavahi-client-dev and pkg-config (run.sh installs them)")
    path = os.path.join(directory, "avahi-client-bench")
    subprocess.run(["cc", "-O2", "-Wall", "-o", path, CLIENT_SOURCE] + flags.stdout.split(), check=True)
    return path


class HeraldBus:
    """A system bus of the host's own for heraldd: the bus's default policy and Herald's policy file, as
    Tests/HeraldIntegrationTests/AvahiDBusAPITests.swift builds it, at the system bus's usual path in the
    host's private /run."""

    CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"""

    def __init__(self, host):
        path = f"{host.directory}/herald-bus.conf"
        with open(path, "w") as f:
            f.write(self.CONFIG.format(socket=BUS_SOCKET, policy=POLICY))
        host.run(["rm", "-f", BUS_SOCKET])
        self.process = host.spawn(["dbus-daemon", f"--config-file={path}", "--nofork", "--nopidfile", "--nosyslog",
                                   "--print-address"])
        if self.process.stdout.wait_for(lambda l: "unix:path=" in l, 10) is None:
            raise RuntimeError("dbus-daemon did not start: " + self.process.stderr.text())

    def stop(self):
        self.process.stop(2)


def wait_for_name(host, timeout=15):
    """Waits until org.freedesktop.Avahi has an owner on the host's system bus."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = host.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                          "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Avahi"], timeout=5)
        if "boolean true" in reply.stdout.text():
            return
        time.sleep(0.1)
    raise RuntimeError("nobody owns org.freedesktop.Avahi on the host's bus")


def instance_names(peer_count, per_peer, types):
    """(name, type) of every instance advertise_many advertised, as peers/zc_advertise.py names them."""
    return [(f"inst-{index} {i}", f"_bench{i % types}._tcp") for index in range(peer_count) for i in range(per_peer)]


def first_items(host, client, first, count, gap_ms=500):
    """Browse → first ItemNew of `count` fresh types; the latencies (s) and the number that got none."""
    process = host.spawn([client, "first-item", "_first", str(first), str(count), str(gap_ms)])
    process.wait(count * (10 + gap_ms / 1000) + 30)
    process.stop(1)
    values, missed = [], 0
    for _, line in process.stdout.lines:
        fields = line.split()
        if len(fields) == 3 and fields[0] == "first":
            if fields[2] == "none":
                missed += 1
            else:
                values.append(float(fields[2]))
    if len(values) + missed < count:
        raise RuntimeError("the first-item client stopped early: " + process.stderr.text()[-2000:])
    return values, missed


def reset_peak(pids):
    """Resets the peak RSS (VmHWM) of `pids` to their current RSS; False where the kernel refused."""
    ok = True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            ok = False
    return ok


def resolve_all(daemon, bus_pid, client, names, window):
    """Resolves every (name, type) in `names` through `daemon` with at most `window` resolvers in flight."""
    process = daemon.host.spawn([client, "resolve", str(window)], stdin=subprocess.PIPE)
    process.popen.stdin.write("".join(f"{n}\t{t}\n" for n, t in names).encode() + b"end\n")
    process.popen.stdin.flush()
    if process.stdout.wait_for(lambda l: l.startswith("ready "), 30) is None:
        raise RuntimeError("the resolve client did not start: " + process.stderr.text()[-2000:])
    pids = [pid for pid in daemon.pids if os.path.exists(f"/proc/{pid}")]
    peak_reset = reset_peak(pids)
    rss_before = rss_kib(daemon)
    cpu0, bus_cpu0 = cpu_of(daemon), cpu_seconds(bus_pid)
    process.popen.stdin.write(b"go\n")
    process.popen.stdin.flush()
    done = process.stdout.wait_for(lambda l: l.startswith("resolved "), 320)
    cpu, bus_cpu = cpu_of(daemon) - cpu0, cpu_seconds(bus_pid) - bus_cpu0
    peak = rss_kib(daemon, "VmHWM")
    process.wait(5)
    process.stop(1)
    if done is None:
        raise RuntimeError("the resolve client did not finish: " + process.stderr.text()[-2000:])
    found, failed, refused, seconds, most, client_cpu, client_peak, call_mean, call_max = done[1].split()[1:]
    reasons = {}
    for _, line in process.stderr.lines:
        reason = line.rsplit(": ", 1)[-1]
        reasons[reason] = reasons.get(reason, 0) + 1
    progress = [(float(l.split()[1]), int(l.split()[2])) for _, l in process.stdout.lines if l.startswith("progress ")]
    return {"instances": len(names), "window": window, "found": int(found), "failed": int(failed),
            "refused": int(refused), "seconds": float(seconds), "max_in_flight": int(most),
            "cpu_s": cpu, "bus_cpu_s": bus_cpu, "peak_rss_kib": peak, "rss_before_kib": rss_before,
            "peak_reset": peak_reset, "client_cpu_s": float(client_cpu), "client_peak_kib": int(client_peak),
            "call_mean_ms": float(call_mean), "call_max_ms": float(call_max),
            "errors": reasons, "progress": progress}


def describe(label, r):
    errors = ", ".join(f"{n} {reason}" for reason, n in sorted(r["errors"].items())) or "none"
    return (f"{label}: {r['found']}/{r['instances']} Found, {r['failed']} Failure, {r['refused']} refused in "
            f"{r['seconds']:.2f} s (at most {r['max_in_flight']} in flight; ServiceResolverNew calls "
            f"{r['call_mean_ms']:.2f} ms on average, {r['call_max_ms']:.1f} at most); daemon CPU {r['cpu_s']:.2f} s, "
            f"peak RSS {r['peak_rss_kib'] / 1024:.1f} MiB (from {r['rss_before_kib'] / 1024:.1f}); "
            f"bus CPU {r['bus_cpu_s']:.2f} s, client CPU {r['client_cpu_s']:.2f} s; errors: {errors}")


def dbus_api(args, advertise_many):
    """Runs (a), (b) and (c) for Herald and then Avahi on one LAN; see the module's description."""
    trials = 5 if args.quick else args.trials
    instances, types, window = (400 if args.quick else 2000), 20, args.dbus_window
    lan = LAN(6)
    try:
        client = build_client(lan.directory)
        peers, first_host, daemon_host = lan.hosts[:4], lan.hosts[4], lan.hosts[5]
        expected = advertise_many(lan, peers, instances, types)
        names = instance_names(len(peers), expected // len(peers), types)
        first_ad = first_host.spawn([sys.executable, "-u", os.path.join(PEERS, "zc_advertise.py"), first_host.ipv4,
                                     first_host.name, str(2 * trials), str(2 * trials), "first", "_first"])
        if first_ad.stdout.wait_for(lambda l: l.startswith("READY"), 120) is None:
            raise RuntimeError("first-item advertiser not ready: " + first_ad.stderr.text()[-2000:])
        log(f"  {expected} instances of {types} types advertised; {2 * trials} more types for the browses")
        time.sleep(3)
        runs = {}
        for index, (label, make) in enumerate((("Herald", lambda: Herald(daemon_host)),
                                               ("Avahi", lambda: Avahi(daemon_host)))):
            herald_bus = HeraldBus(daemon_host) if label == "Herald" else None
            daemon = make()
            wait_for_name(daemon_host)
            bus_pid = herald_bus.process.pid if herald_bus else daemon.bus.pid
            time.sleep(args.settle)
            latencies, missed = first_items(daemon_host, client, index * trials, trials)
            first = summary(latencies)
            log(f"  {label}: browse → first ItemNew, {len(latencies)}/{trials} trials: median "
                f"{first['median'] * 1000 if first['median'] is not None else float('nan'):.1f} ms, "
                f"p95 {first['p95'] * 1000 if first['p95'] is not None else float('nan'):.1f} ms, "
                f"each {[round(v * 1000, 1) for v in latencies]}")
            daemon.stop()
            daemon = make()
            wait_for_name(daemon_host)
            time.sleep(args.settle)
            cold = resolve_all(daemon, bus_pid, client, names, window)
            log("  " + describe(f"{label}, resolve all (nothing cached)", cold))
            again = resolve_all(daemon, bus_pid, client, names, window)
            log("  " + describe(f"{label}, resolve all again", again))
            daemon.stop()
            if herald_bus:
                herald_bus.stop()
            runs[label] = {"first_item": {"samples": latencies, "missed": missed, "summary": first},
                           "resolve": cold, "resolve_again": again}
            time.sleep(2)
        first_ad.stop(2)
    finally:
        lan.close()
    herald, avahi = runs["Herald"], runs["Avahi"]
    rows = [("browse → first ItemNew, median (ms)", herald["first_item"]["summary"]["median"],
             avahi["first_item"]["summary"]["median"], 1000),
            ("resolve all, nothing cached (s)", herald["resolve"]["seconds"], avahi["resolve"]["seconds"], 1),
            ("  Found", herald["resolve"]["found"], avahi["resolve"]["found"], None),
            ("  daemon CPU (s)", herald["resolve"]["cpu_s"], avahi["resolve"]["cpu_s"], 1),
            ("  daemon peak RSS (MiB)", herald["resolve"]["peak_rss_kib"], avahi["resolve"]["peak_rss_kib"], 1 / 1024),
            ("  bus CPU (s)", herald["resolve"]["bus_cpu_s"], avahi["resolve"]["bus_cpu_s"], 1),
            ("  client CPU (s)", herald["resolve"]["client_cpu_s"], avahi["resolve"]["client_cpu_s"], 1),
            ("  ServiceResolverNew call, mean (ms)", herald["resolve"]["call_mean_ms"],
             avahi["resolve"]["call_mean_ms"], 1),
            ("resolve all again (s)", herald["resolve_again"]["seconds"], avahi["resolve_again"]["seconds"], 1),
            ("  Found", herald["resolve_again"]["found"], avahi["resolve_again"]["found"], None),
            ("  daemon CPU (s)", herald["resolve_again"]["cpu_s"], avahi["resolve_again"]["cpu_s"], 1)]
    log(f"\n== D-Bus API, {expected} instances, window {window}: Herald, Avahi, Herald/Avahi")
    for title, h, a, scale in rows:
        shown = [("—" if v is None else str(v) if scale is None else f"{v * scale:.2f}") for v in (h, a)]
        r = ratio(h, a)
        log(f"  {title:38s} {shown[0]:>9s} {shown[1]:>9s} {'—' if r is None else f'{r:.2f}×':>7s}")
    return {"instances": expected, "types": types, "window": window, "trials": trials, "runs": runs}
