"""The office benchmark: a LAN loaded the way a busy office loads it, Herald and Avahi in the same run.

INSTANCES service instances of TYPES types (`_bench0._tcp` …) advertised by python-zeroconf on PEERS peer hosts
(an equal share each, every type on every peer), and on the daemon's host CLIENTS browse-and-resolve
processes started together (`herald browse TYPE --resolve --json`, `avahi-browse -p -r TYPE`), each type
browsed by CLIENTS / TYPES of them. Per trial and daemon (fresh each time, default configuration): the time
until every instance was discovered and until every one was resolved with at least one address, the daemon's
CPU time over the run and its peak RSS (VmHWM; Avahi's two processes summed, dbus-daemon apart), and each
client's peak RSS (VmHWM, read just before it is stopped). Separately, the CLI's start time: `herald --help`
and `avahi-browse --help`, run many times in a row.

The clients wait behind a FIFO until every one of them has been spawned, then all start at once: the time
is counted from that moment.
"""

import json
import os
import signal
import time

from daemons import HERALD, Avahi, Herald, cpu_of, rss_kib, status_kib
from lan import LAN
from stats import median, percentile

SHAPES = {
    # name: (instances, types, peer hosts, clients)
    "office": (2000, 20, 5, 20),
    # Ten times the instances, types and hosts. The issue asks for 50 clients, but `herald browse` and `avahi-browse`
    # browse one type each, and every type must be browsed for every instance to be found: one client per type.
    "office10x": (20000, 200, 10, 200),
    "quick": (400, 20, 5, 20),
}


def log(text):
    print(text, flush=True)


def _parse_herald(line):
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    key = (obj.get("type", "").lower(), obj.get("name"))
    if obj.get("event") == "resolved":
        return ("resolved", key) if obj.get("addresses") else None
    if obj.get("event") == "add":
        return ("add", key)
    return None


def _parse_avahi(line):
    fields = line.split(";")
    if len(fields) < 6:
        return None
    key = (fields[4].lower() + ".", fields[3])
    if fields[0] == "+":
        return ("add", key)
    if fields[0] == "=" and len(fields) >= 8 and fields[7]:
        return ("resolved", key)
    return None


def run_clients(daemon, host, types, clients, expected, timeout):
    """Starts `clients` browse-and-resolve processes at once; returns the times, counts and client RSS."""
    fifo = f"{host.directory}/office-go-{time.monotonic_ns() % 10**9}"
    os.mkfifo(fifo)
    processes = []
    for c in range(clients):
        argv = daemon.browse_argv(f"_bench{c % types}._tcp", resolve=True)
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv)
        processes.append(host.spawn(["/bin/sh", "-c", f"read go < '{fifo}'; exec {quoted}"]))
    # Every shell is blocked opening the FIFO; opening it for writing releases them all.
    time.sleep(0.3)
    cpu0 = cpu_of(daemon)
    writer = os.open(fifo, os.O_WRONLY)
    start = time.monotonic()
    os.write(writer, b"go\n" * clients)
    os.close(writer)
    parse = _parse_herald if isinstance(daemon, Herald) else _parse_avahi
    added, resolved = set(), set()
    discovered_at = resolved_at = None
    cursors = [0] * len(processes)
    deadline = start + timeout
    last_progress = time.monotonic()
    while time.monotonic() < deadline and (discovered_at is None or resolved_at is None):
        time.sleep(0.01)
        before = len(added) + len(resolved)
        for i, process in enumerate(processes):
            lines = process.stdout.lines
            while cursors[i] < len(lines):
                when, line = lines[cursors[i]]
                cursors[i] += 1
                event = parse(line)
                if event is None:
                    continue
                (added if event[0] == "add" else resolved).add(event[1])
                if discovered_at is None and len(added) >= expected:
                    discovered_at = when - start
                if resolved_at is None and len(resolved) >= expected:
                    resolved_at = when - start
        if len(added) + len(resolved) != before:
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > 10:
            break  # nothing new for 10 s: it will not get there
    time.sleep(0.5)
    cpu = cpu_of(daemon) - cpu0
    client_peaks = [status_kib(p.pid, "VmHWM") for p in processes if p.running()]
    for process in processes:
        process.stop(1, signal.SIGKILL)
    os.unlink(fifo)
    return {"discovered": len(added), "resolved": len(resolved), "discover_s": discovered_at,
            "resolve_s": resolved_at, "cpu_s": cpu, "client_peak_kib": client_peaks}


def start_time(argv, runs):
    """Median and p95 wall time (s) of running argv to completion `runs` times, output discarded, and the median
    CPU time (user + system, s) the process used: on a shared machine the wall time includes waiting for a CPU."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    times, cpu = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, _, usage = os.wait4(pid, 0)
        times.append(time.perf_counter() - t0)
        cpu.append(usage.ru_utime + usage.ru_stime)
    os.close(devnull)
    return {"median": median(times), "p95": percentile(times, 0.95), "cpu_median": median(cpu), "runs": runs}


def cli_start(runs):
    avahi_browse = "/usr/bin/avahi-browse"
    figures = {"herald --help": start_time([HERALD, "--help"], runs),
               "avahi-browse --help": start_time([avahi_browse, "--help"], runs),
               "/bin/true": start_time(["/bin/true"], runs)}
    return figures


def office(args, advertise_many, herald_status):
    """See the module's documentation; --office-shape picks the load, --trials the number of trials.
    `advertise_many` and `herald_status` are the scale benchmark's (bench.py)."""
    shape = "quick" if args.quick else args.office_shape
    instances, types, peer_count, clients = SHAPES[shape]
    trials = 1 if args.quick else args.trials
    timeout = 120 if instances > 5000 else 60
    lan = LAN(peer_count + 1)
    runs = {"Herald": [], "Avahi": []}
    try:
        peers, daemon_host = lan.hosts[:peer_count], lan.hosts[peer_count]
        expected = advertise_many(lan, peers, instances, types)
        log(f"  {expected} instances of {types} types advertised by {peer_count} hosts; {clients} clients")
        time.sleep(3)
        extra = []
        if args.herald_cache:
            # A cache other than the default, through heraldd's configuration file (docs/heraldd.conf).
            config = f"{daemon_host.directory}/herald-cache.conf"
            with open(config, "w") as f:
                f.write(f"[limits]\ncache-entries-per-interface = {args.herald_cache}\n")
            extra = ["--config", config]
            log(f"  heraldd: cache-entries-per-interface = {args.herald_cache}")
        for trial in range(trials):
            for label, make in (("Herald", lambda: Herald(daemon_host, extra=extra)),
                                ("Avahi", lambda: Avahi(daemon_host))):
                daemon = make()
                time.sleep(args.settle)
                drops0 = daemon_host.udp_drops()
                peer_drops0 = sum(p.udp_drops() for p in peers)
                outcome = run_clients(daemon, daemon_host, types, clients, expected, timeout)
                # Packets the daemon's sockets had no room for (/proc/net/udp, port 5353, in its namespace), and the
                # peers' (python-zeroconf's) for queries.
                outcome["socket_drops"] = daemon_host.udp_drops() - drops0
                outcome["peer_socket_drops"] = sum(p.udp_drops() for p in peers) - peer_drops0
                outcome["peak_rss_kib"] = rss_kib(daemon, "VmHWM")
                if isinstance(daemon, Avahi):
                    outcome["dbus_rss_kib"] = status_kib(daemon.bus.pid, "VmHWM")
                else:
                    outcome["status"] = herald_status(daemon)
                    # What heraldd logged as dropped (rate-limited sources, a full cache): where a shortfall comes from.
                    outcome["warnings"] = [line for line in daemon.process.stderr.text().splitlines()
                                           if "dropped" in line]
                daemon.stop()
                runs[label].append(outcome)
                peaks = outcome["client_peak_kib"]
                log(f"  trial {trial + 1}/{trials} {label}: discovered {outcome['discovered']}/{expected} in "
                    f"{_fmt(outcome['discover_s'])}, resolved {outcome['resolved']}/{expected} in "
                    f"{_fmt(outcome['resolve_s'])}, socket drops {outcome['socket_drops']} (peers' {outcome['peer_socket_drops']}), CPU {outcome['cpu_s']:.2f} s, peak RSS "
                    f"{outcome['peak_rss_kib'] / 1024:.1f} MiB, clients' peak RSS median "
                    f"{(median(peaks) or 0) / 1024:.1f} MiB (max {max(peaks or [0]) / 1024:.1f})")
                time.sleep(2)
    finally:
        lan.close()
    start = cli_start(20 if args.quick else 200)
    summary = {label: _summarise(values) for label, values in runs.items()}
    log(f"\n== {shape}: {expected} instances, {types} types, {peer_count} peer hosts, {clients} clients "
        f"(median of {trials})")
    log(f"  {'measure':34s} {'Herald':>12s} {'Avahi':>12s}")
    for key, title, unit in ROWS:
        log(f"  {title:34s} {_fmt(summary['Herald'][key], unit):>12s} {_fmt(summary['Avahi'][key], unit):>12s}")
    for command, figure in start.items():
        log(f"  start, {command:27s} median {figure['median'] * 1000:.2f} ms, p95 {figure['p95'] * 1000:.2f} ms, "
            f"CPU median {figure['cpu_median'] * 1000:.2f} ms")
    return {"shape": shape, "instances": expected, "types": types, "peers": peer_count, "clients": clients,
            "trials": trials, "runs": runs, "summary": summary, "cli_start": start}


ROWS = (("discover_s", "all discovered", "s"), ("resolve_s", "all resolved with addresses", "s"),
        ("cpu_s", "daemon CPU", "s"), ("peak_rss_mib", "daemon peak RSS", "MiB"),
        ("client_peak_mib", "each client's peak RSS (median)", "MiB"),
        ("client_peak_max_mib", "each client's peak RSS (max)", "MiB"))


def _summarise(outcomes):
    def med(values):
        """The median, a miss (None) counting as longer than any figure."""
        ordered = sorted(values, key=lambda v: (v is None, v or 0))
        return ordered[(len(ordered) - 1) // 2] if ordered else None
    return {"discover_s": med([o["discover_s"] for o in outcomes]),
            "resolve_s": med([o["resolve_s"] for o in outcomes]),
            "discovered": med([o["discovered"] for o in outcomes]),
            "resolved": med([o["resolved"] for o in outcomes]),
            "cpu_s": med([o["cpu_s"] for o in outcomes]),
            "peak_rss_mib": med([o["peak_rss_kib"] / 1024 for o in outcomes]),
            "client_peak_mib": med([median(o["client_peak_kib"]) / 1024 for o in outcomes if o["client_peak_kib"]]),
            "client_peak_max_mib": med([max(o["client_peak_kib"]) / 1024 for o in outcomes
                                        if o["client_peak_kib"]])}


def _fmt(value, unit="s"):
    return "—" if value is None else f"{value:.2f} {unit}"
