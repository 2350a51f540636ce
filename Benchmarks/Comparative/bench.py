#!/usr/bin/env python3
"""Herald against avahi-daemon (and python-zeroconf where it applies), side by side on one namespaced LAN.

    bench.py [--quick] [--out results.json] [BENCHMARK ...]

Benchmarks: cold_browse, time_to_visible, scale, footprint, many_clients, storm, office, dbus (default: all, in
that order). Each builds its own LAN of network namespaces and deletes it afterwards. Figures are printed as
they come and all of them are written to --out as JSON (report.py turns that into charts and a table).
Run as root, after `swift build -c release --static-swift-stdlib --product heraldd --product herald` (run.sh does both).
"""

import argparse
import json
import os
import platform
import resource
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbus_clients  # noqa: E402
import dnssd_ipc  # noqa: E402
import office  # noqa: E402
from daemons import HERALD, Avahi, Herald, cpu_of, memory_breakdown, rss_kib, status_kib  # noqa: E402
from lan import IPV4_PREFIX, LAN  # noqa: E402
from scale_ipc import discover_all_ipc  # noqa: E402
from stats import mean, ratio, summary  # noqa: E402

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers")
PYTHON = sys.executable


def log(text):
    print(text, flush=True)


def peer(host, script, *args):
    return host.spawn([PYTHON, "-u", os.path.join(PEERS, script)] + [str(a) for a in args])


def wait_ready(process, timeout, what):
    if process.stdout.wait_for(lambda l: l.startswith("READY"), timeout) is None:
        raise RuntimeError(f"{what} not ready: {process.stderr.text()[-2000:]}")


def is_herald_event(line, key):
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    if key == "add":
        return obj.get("event") == "add"
    return "port" in obj


def first_add(daemon, process, timeout):
    if isinstance(daemon, Herald):
        hit = process.stdout.wait_for(lambda l: is_herald_event(l, "add"), timeout)
    else:
        hit = process.stdout.wait_for(Avahi.is_add, timeout)
    return None if hit is None else hit[0] - process.started


def fmt(value, unit="s", digits=3):
    return "—" if value is None else f"{value:.{digits}f} {unit}".strip()


def print_table(title, rows):
    log(f"\n== {title}")
    for label, s in rows:
        log(f"  {label:28s} n={s['n']:4d}  median {fmt(s['median'])}  p95 {fmt(s['p95'])}")


# ---------------------------------------------------------------- 1. cold browse latency

def browse_once(daemon, host, label, service_type):
    """One cold browse of `service_type` through `daemon` (fresh): seconds to the first result, or None."""
    if label.startswith("Herald (app socket)"):
        start = time.monotonic()
        sock = dnssd_ipc.connect(daemon.socket)
        sock.sendall(dnssd_ipc.browse_request(service_type))
        dnssd_ipc.read_status(sock)
        reader = dnssd_ipc.ReplyReader()
        latency = None
        sock.settimeout(10)
        try:
            while latency is None:
                data = sock.recv(65536)
                if not data:
                    break
                for op, body in reader.feed(data):
                    if op == dnssd_ipc.OP_BROWSE_REPLY and dnssd_ipc.parse_browse_reply(body)[0] & 2:
                        latency = time.monotonic() - start
        except OSError:
            pass
        sock.close()
        return latency
    process = host.spawn(daemon.browse_argv(service_type))
    latency = first_add(daemon, process, 10)
    process.stop(1, signal.SIGKILL)
    return latency


def cold_browse(args):
    """Fresh daemon per trial; time from starting the browse to its first result for a service a peer in
    another namespace already advertises. Herald is measured through its CLI (process start included, as
    for avahi-browse) and through the app socket directly. The main figures use a python-zeroconf
    advertiser; a second, smaller set uses an avahi-daemon advertiser (`avahi-publish`), whose answers to a
    QU question are not sent at once."""
    trials = 5 if args.quick else args.trials
    lan = LAN(3)
    try:
        advertiser, browser, avahi_advertiser = lan.hosts
        ad = peer(advertiser, "zc_advertise.py", advertiser.ipv4, advertiser.name, 1, 1, "cold", "_cold")
        wait_ready(ad, 30, "advertiser")
        publisher_daemon = Avahi(avahi_advertiser)
        publisher = avahi_advertiser.spawn(publisher_daemon.register_argv("cold avahi", "_coldav._tcp", 4400))
        time.sleep(2)
        results = {"Herald (herald browse)": [], "Herald (app socket)": [], "Avahi (avahi-browse)": []}
        avahi_peer = {"Herald (app socket), Avahi advertiser": [], "Avahi (avahi-browse), Avahi advertiser": []}
        failures = {k: 0 for k in list(results) + list(avahi_peer)}
        for trial in range(trials):
            for label in list(results) + list(avahi_peer):
                daemon = Herald(browser) if label.startswith("Herald") else Avahi(browser)
                time.sleep(args.settle)
                service_type = "_coldav._tcp" if label in avahi_peer else "_cold0._tcp"
                latency = browse_once(daemon, browser, label, service_type)
                daemon.stop()
                if latency is None:
                    failures[label] += 1
                else:
                    (avahi_peer if label in avahi_peer else results)[label].append(latency)
            log(f"  trial {trial + 1}/{trials}: " + ", ".join(
                f"{k} {fmt(v[-1] if v else None)}" for k, v in list(results.items()) + list(avahi_peer.items())))
        publisher.stop(2)
        publisher_daemon.stop()
        zc = peer(browser, "zc_cold_browse.py", browser.ipv4, "_cold0._tcp", trials)
        zc.wait(trials * 15 + 30)
        zc_values = [float(l.split()[1]) for _, l in zc.stdout.lines if l.startswith("trial ")]
        results["python-zeroconf"] = [v for v in zc_values if v >= 0]
        failures["python-zeroconf"] = trials - len(results["python-zeroconf"])
    finally:
        lan.close()
    rows = [(k, summary(v)) for k, v in results.items()]
    print_table("cold browse latency (s), python-zeroconf advertiser", rows)
    avahi = summary(results["Avahi (avahi-browse)"])["median"]
    for label in ("Herald (herald browse)", "Herald (app socket)"):
        log(f"  ratio {label} / Avahi median: {fmt(ratio(summary(results[label])['median'], avahi), '×', 2)}")
    peer_rows = [(k, summary(v)) for k, v in avahi_peer.items()]
    print_table("cold browse latency (s), avahi-daemon advertiser", peer_rows)
    return {"samples": results, "failures": failures, "summary": dict(rows),
            "avahi_advertiser": {"samples": avahi_peer, "summary": dict(peer_rows)}}


# ---------------------------------------------------------------- 2. time to visible

def time_to_visible(args):
    """A registration request in one namespace (herald register / avahi-publish, both daemons warm) until a
    python-zeroconf browser in another namespace reports the service. Trials alternate between the daemons.

    A listener next to the browser (peers/mdns_timeline.py) splits each trial into its phases: request → first
    probe (a random wait under RFC 6762 §8.1, plus the request's own handling), first probe → first
    announcement (the probing, 750 ms under §8.1), and announcement → browser."""
    trials = 5 if args.quick else args.trials
    lan = LAN(3)
    try:
        herald_host, watcher_host, avahi_host = lan.hosts
        watcher = peer(watcher_host, "zc_watch.py", watcher_host.ipv4, "_vis._tcp")
        wait_ready(watcher, 20, "watcher")
        timeline = peer(watcher_host, "mdns_timeline.py", watcher_host.ipv4, "vis-")
        wait_ready(timeline, 10, "timeline listener")
        daemons = [Herald(herald_host), Avahi(avahi_host)]
        time.sleep(3)
        results = {"Herald (herald register)": [], "Herald (app socket)": [], "Avahi (avahi-publish)": []}
        phases = {label: {phase: [] for phase in VISIBILITY_PHASES} for label in results}
        for trial in range(trials):
            for label in results:
                daemon = daemons[1] if label.startswith("Avahi") else daemons[0]
                name = f"vis-{label.split()[0]}-{label.split()[1][1:4]}-{trial}"
                mark = len(watcher.stdout.lines)
                timeline_mark = len(timeline.stdout.lines)
                if label == "Herald (app socket)":
                    started = time.monotonic()
                    sock = dnssd_ipc.connect(daemon.socket)
                    sock.sendall(dnssd_ipc.register_request(name, "_vis._tcp", 8000 + trial))
                else:
                    process = daemon.host.spawn(daemon.register_argv(name, "_vis._tcp", 8000 + trial))
                    started = process.started
                hit = watcher.stdout.wait_for(lambda l, n=name: l.startswith("add ") and f" {n}." in l, 10,
                                              start=mark)
                if hit is not None:
                    seen = float(hit[1].split()[1])
                    results[label].append(seen - started)
                    split = visibility_phases(timeline, timeline_mark, name, started, seen)
                    if split is not None:
                        for phase, value in zip(VISIBILITY_PHASES, split):
                            phases[label][phase].append(value)
                if label == "Herald (app socket)":
                    sock.close()
                else:
                    process.stop(2)
                time.sleep(1.2)
            log(f"  trial {trial + 1}/{trials}: " + ", ".join(
                f"{k} {fmt(v[-1] if v else None)}" for k, v in results.items()))
        for daemon in daemons:
            daemon.stop()
    finally:
        lan.close()
    rows = [(k, summary(v)) for k, v in results.items()]
    print_table("time to visible (s)", rows)
    log("  where the time goes (mean; median in parentheses): " + "; ".join(VISIBILITY_PHASES))
    for label, split in phases.items():
        log(f"  {label}: " + "; ".join(
            f"{fmt(mean(values))} ({fmt(summary(values)['median'])})" for values in split.values()))
    avahi = summary(results["Avahi (avahi-publish)"])["median"]
    for label in ("Herald (herald register)", "Herald (app socket)"):
        log(f"  ratio {label} / Avahi median: {fmt(ratio(summary(results[label])['median'], avahi), '×', 2)}")
    return {"samples": results, "summary": dict(rows), "trials": trials, "phases": phases}


VISIBILITY_PHASES = ("request → first probe", "first probe → first announcement", "announcement → browser")


def visibility_phases(timeline, start, name, requested, seen):
    """(request → first probe, first probe → first announcement, announcement → browser) in seconds for one
    trial, from the timeline listener's lines; None when it missed a message."""
    first = {}
    for kind in ("probe", "response"):
        hit = timeline.stdout.wait_for(lambda l, k=kind: l.split()[0] == k and l.split()[2] == name, 1, start=start)
        if hit is None:
            return None
        first[kind] = float(hit[1].split()[1])
    return first["probe"] - requested, first["response"] - first["probe"], seen - first["response"]


# ---------------------------------------------------------------- 3./4. scale and footprint

def advertise_many(lan, peers, instances, types):
    per_peer = instances // len(peers)
    processes = []
    for index, host in enumerate(peers):
        processes.append(peer(host, "zc_advertise.py", host.ipv4, host.name, per_peer, types, f"inst-{index}"))
    for process in processes:
        wait_ready(process, 240, "advertiser")
    return per_peer * len(peers)


def discover_all(daemon, host, types, expected, timeout):
    """Browses and resolves all `types` with one CLI process per type; returns times and counts."""
    start = time.monotonic()
    processes = [host.spawn(daemon.browse_argv(f"_bench{t}._tcp", resolve=True)) for t in range(types)]
    herald = isinstance(daemon, Herald)
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
                if herald:
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    key = (obj.get("type"), obj.get("name"))
                    if "port" in obj:
                        resolved.add(key)
                    elif obj.get("event") == "add":
                        added.add(key)
                else:
                    fields = line.split(";")
                    if len(fields) >= 6:
                        key = (fields[4], fields[3])
                        if fields[0] == "+":
                            added.add(key)
                        elif fields[0] == "=":
                            resolved.add(key)
                if discovered_at is None and len(added) >= expected:
                    discovered_at = when - start
                if resolved_at is None and len(resolved) >= expected:
                    resolved_at = when - start
        if len(added) + len(resolved) != before:
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > 10:
            break  # nothing new for 10 s: it will not get there
    for process in processes:
        process.stop(1, signal.SIGKILL)
    return {"discovered": len(added), "resolved": len(resolved), "discover_s": discovered_at,
            "resolve_s": resolved_at}


def herald_status(daemon):
    result = daemon.host.run(daemon.control(["status", "--json"]), timeout=10)
    try:
        return json.loads(result.stdout.text().splitlines()[0])
    except (ValueError, IndexError):
        return {"raw": result.stdout.text()}


def scale(args):
    """2,000 instances of 20 types advertised by python-zeroconf in 4 namespaces; each daemon, fresh and
    with its default configuration, browses and resolves all of them (20 CLI browsers with resolve:
    `herald browse --resolve`, `avahi-browse -r`; and Herald once more through its app socket directly)."""
    instances, types = (400, 20) if args.quick else (2000, 20)
    lan = LAN(5)
    runs = []
    try:
        peers, daemon_host = lan.hosts[:4], lan.hosts[4]
        expected = advertise_many(lan, peers, instances, types)
        log(f"  {expected} instances of {types} types advertised")
        time.sleep(3)
        variants = [("Herald", lambda: Herald(daemon_host)), ("Herald (app socket)", lambda: Herald(daemon_host)),
                    ("Avahi", lambda: Avahi(daemon_host))]
        if not args.quick:
            variants.append(("Avahi (cache-entries-max=16384)",
                             lambda: Avahi(daemon_host, cache_entries_max=16384)))
        for label, make in variants:
            daemon = make()
            time.sleep(args.settle)
            cpu0 = cpu_of(daemon)
            if label == "Herald (app socket)":
                outcome = discover_all_ipc(daemon.socket, types, expected, 60)
            else:
                outcome = discover_all(daemon, daemon_host, types, expected, 60)
            time.sleep(0.5)
            outcome.update(label=label, cpu_s=cpu_of(daemon) - cpu0, peak_rss_kib=rss_kib(daemon, "VmHWM"),
                           rss_kib=rss_kib(daemon), processes=len(daemon.pids))
            if isinstance(daemon, Avahi):
                outcome["dbus_rss_kib"] = status_kib(daemon.bus.pid, "VmRSS")
            else:
                outcome["status"] = herald_status(daemon)
            daemon.stop()
            runs.append(outcome)
            log(f"  {label}: discovered {outcome['discovered']}/{expected} in {fmt(outcome['discover_s'])}, "
                f"resolved {outcome['resolved']}/{expected} in {fmt(outcome['resolve_s'])}, "
                f"CPU {outcome['cpu_s']:.2f} s, peak RSS {outcome['peak_rss_kib'] / 1024:.1f} MiB")
            time.sleep(2)
    finally:
        lan.close()
    return {"instances": expected, "types": types, "runs": runs}


IDLE_AFTER_START = 10  # seconds from a daemon's start to its idle reading
# Seconds from the end of the clients' browsing to the loaded reading: long enough for the daemons to have gone
# quiet (heraldd trims its heap only then), so that the figure is what a daemon keeps, not what it was using.
LOADED_AFTER_CLIENTS = 10


def footprint(args):
    """RSS of each daemon idle (10 s after start: both have announced their host names by then and heraldd has
    given back the pages its start-up alone used), then with its cache filled two ways: passively (both
    daemons run before the peers advertise ~3,400 instances, so the peers' announcements fill their caches
    with no client asking anything: what the cached records alone cost) and by clients (a fresh daemon
    browses and resolves all the instances, so the figure includes those 3,400 operations)."""
    instances = 400 if args.quick else 3400
    lan = LAN(6)
    runs = []
    passive = []
    try:
        peers, daemon_host, avahi_host = lan.hosts[:4], lan.hosts[4], lan.hosts[5]
        listeners = [Herald(daemon_host), Avahi(avahi_host)]
        time.sleep(IDLE_AFTER_START)
        idle_before = [memory_breakdown(d) for d in listeners]
        # Each peer multicasts one announcement (PTR, SRV, TXT, A) per instance, about 500 a second, below
        # heraldd's per-source rate limit.
        announcers = [host.spawn([PYTHON, "-u", os.path.join(PEERS, "announce.py"), host.ipv4, "_fill._tcp",
                                  host.name], stdin=subprocess.PIPE) for host in peers]
        for announcer in announcers:
            wait_ready(announcer, 10, "announcer")
        per_peer = instances // len(peers)
        for start in range(0, per_peer, 50):
            for index, announcer in enumerate(announcers):
                names = "".join(f"fill-{index}-{i}\n" for i in range(start, min(per_peer, start + 50)))
                announcer.popen.stdin.write(names.encode())
                announcer.popen.stdin.flush()
            time.sleep(0.1)
        time.sleep(3)
        # Read twice, both daemons at the same moments: 3 s after the last announcement (code that receiving ran
        # may still be mapped), then once settled, as long after it as the loaded figure below is read.
        for daemon, idle_memory in zip(listeners, idle_before):
            passive.append({"label": "Herald" if isinstance(daemon, Herald) else "Avahi", "idle": idle_memory,
                            "cached": memory_breakdown(daemon), "processes": len(daemon.pids)})
        time.sleep(LOADED_AFTER_CLIENTS - 3)
        for daemon, entry in zip(listeners, passive):
            entry["settled"] = memory_breakdown(daemon)
            if isinstance(daemon, Herald):
                entry["status"] = herald_status(daemon)
                entry["records"] = entry["status"].get("cachedRecords")
            log(f"  {entry['label']}, peers' announcements only: anonymous {entry['idle']['anon_kib'] / 1024:.1f} → "
                f"{entry['cached']['anon_kib'] / 1024:.1f} MiB, RSS {entry['cached']['rss_kib'] / 1024:.1f} MiB "
                f"after 3 s, {entry['settled']['rss_kib'] / 1024:.1f} MiB after {LOADED_AFTER_CLIENTS} s"
                + (f", {entry['records']} records cached" if "records" in entry else ""))
            daemon.stop()
        for announcer in announcers:
            announcer.stop(2)
        expected = advertise_many(lan, peers, instances, 20)
        time.sleep(3)
        for label, make in (("Herald", lambda: Herald(daemon_host)), ("Avahi", lambda: Avahi(daemon_host))):
            daemon = make()
            time.sleep(IDLE_AFTER_START)
            idle_memory = memory_breakdown(daemon)
            idle = idle_memory["rss_kib"]
            outcome = discover_all(daemon, daemon_host, 20, expected, 60)
            time.sleep(LOADED_AFTER_CLIENTS)
            loaded_memory = memory_breakdown(daemon)
            loaded = loaded_memory["rss_kib"]
            run = {"label": label, "idle_rss_kib": idle, "loaded_rss_kib": loaded, "processes": len(daemon.pids),
                   "idle": idle_memory, "loaded": loaded_memory,
                   "discovered": outcome["discovered"], "resolved": outcome["resolved"]}
            if isinstance(daemon, Herald):
                run["status"] = herald_status(daemon)
            else:
                run["dbus_rss_kib"] = status_kib(daemon.bus.pid, "VmRSS")
            daemon.stop()
            runs.append(run)
            log(f"  {label}: peak at start {idle_memory['peak_kib'] / 1024:.1f} MiB, idle {idle / 1024:.1f} MiB "
                f"({len(daemon.pids)} processes), with the cache filled "
                f"{loaded / 1024:.1f} MiB ({outcome['resolved']} resolved)")
            time.sleep(2)
    finally:
        lan.close()
    return {"instances": expected, "runs": runs, "passive": passive}


# ---------------------------------------------------------------- 5. many clients

def pin(pid, cpus):
    """Limits every thread of process `pid` to `cpus`."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(task), cpus)
        except ProcessLookupError:
            pass


def many_clients(args):
    """N app-socket clients (one connection each) browse one type on heraldd; a peer then announces new
    instances with hand-built packets. Per client event: the time from the packet's arrival at the host
    (the kernel timestamp of an AF_PACKET socket in the daemon's namespace) to the moment the driver's
    epoll reports the client's socket readable. All clients belong to this one Python process, which during a
    round only waits and stamps (one-shot epoll readiness, so a socket is reported once and need not be read)
    and reads and checks the replies after the round, so a client's stamp never includes the reading of
    others. Two passes over the same clients: the driver and heraldd on separate CPUs (each woken driver
    would otherwise preempt the daemon that is still writing to the other clients: hundreds of involuntary
    context switches per round; the driver's side, this process with all its threads and the sniffer and
    announcer, on one CPU, heraldd on the other), and sharing the CPUs as the scheduler likes. Herald only (Avahi's clients
    speak D-Bus, not this protocol)."""
    clients = 100 if args.quick else 1000
    rounds = 3 if args.quick else 10
    cpus = sorted(os.sched_getaffinity(0))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, clients + 256)), hard))
    lan = LAN(2)
    passes = []
    try:
        sender_host, daemon_host = lan.hosts
        daemon = Herald(daemon_host)
        time.sleep(args.settle)
        rss_before = rss_kib(daemon)
        sockets = []
        for _ in range(clients):
            sock = dnssd_ipc.connect(daemon.socket)
            sock.sendall(dnssd_ipc.browse_request("_many._tcp"))
            sockets.append(sock)
        for sock in sockets:
            status = dnssd_ipc.read_status(sock)
            if status != 0:
                raise RuntimeError(f"browse refused: {status}")
            sock.setblocking(False)
        time.sleep(1)
        rss_after = rss_kib(daemon)
        sniffer = peer(daemon_host, "sniff.py", daemon_host.interface, "many-")
        wait_ready(sniffer, 10, "sniffer")
        announcer = sender_host.spawn([PYTHON, "-u", os.path.join(PEERS, "announce.py"), sender_host.ipv4,
                                       "_many._tcp", "manysender"], stdin=subprocess.PIPE)
        wait_ready(announcer, 10, "announcer")
        poller = select.epoll()
        by_fd = {}
        for sock in sockets:
            poller.register(sock.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
            by_fd[sock.fileno()] = (sock, dnssd_ipc.ReplyReader())

        def one_round(instance):
            """Announces `instance` and returns each client's latency (s) from the packet to its event."""
            mark = len(sniffer.stdout.lines)
            announcer.popen.stdin.write((instance + "\n").encode())
            announcer.popen.stdin.flush()
            deadline = time.monotonic() + 5
            readable = {}
            while len(readable) < clients and time.monotonic() < deadline:
                events = poller.poll(0.1, clients)
                now = time.time()
                for fd, _ in events:
                    readable.setdefault(fd, now)
            arrivals = {}
            for fd, when in readable.items():
                sock, reader = by_fd[fd]
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    data = b""
                for op, body in reader.feed(data):
                    if op == dnssd_ipc.OP_BROWSE_REPLY:
                        flags, _, name = dnssd_ipc.parse_browse_reply(body)
                        if name == instance and flags & 2 and fd not in arrivals:
                            arrivals[fd] = when
            for fd in by_fd:
                poller.modify(fd, select.EPOLLIN | select.EPOLLONESHOT)
            seen = sniffer.stdout.wait_for(lambda l, i=instance: l.startswith("seen ") and l.endswith(i), 2,
                                           start=mark)
            if seen is None:
                raise RuntimeError("the sniffer did not see the announcement")
            packet_time = float(seen[1].split()[1])
            return [t - packet_time for t in arrivals.values()]

        layouts = [("driver and heraldd on separate CPUs", {cpus[0]}, {cpus[-1]}),
                   ("sharing the CPUs", set(cpus), set(cpus))] if len(cpus) > 1 else [("one CPU", set(cpus), set(cpus))]
        for label, daemon_cpus, driver_cpus in layouts:
            for pid in daemon.pids:
                pin(pid, daemon_cpus)
            # The driver side is this process with its output threads, the sniffer and the announcer.
            for pid in (os.getpid(), sniffer.popen.pid, announcer.popen.pid):
                pin(pid, driver_cpus)
            log(f"  {label}:")
            latencies, per_round = [], []
            for r in range(rounds):
                instance = f"many-{len(passes)}-{r}"
                round_latencies = one_round(instance)
                latencies += round_latencies
                rs = summary(round_latencies)
                per_round.append({"events": len(round_latencies), "p50": rs["median"], "p99": rs["p99"]})
                log(f"    round {r + 1}/{rounds}: {len(round_latencies)}/{clients} clients got the event; "
                    f"p50 {fmt(rs['median'] and rs['median'] * 1000, 'ms', 2)} "
                    f"p99 {fmt(rs['p99'] and rs['p99'] * 1000, 'ms', 2)}")
                time.sleep(0.5)
            passes.append({"label": label, "samples": latencies, "summary": summary(latencies),
                           "per_round": per_round})
        pin(os.getpid(), set(cpus))
        for sock in sockets:
            sock.close()
        daemon.stop()
    finally:
        lan.close()
    per_client = (rss_after - rss_before) * 1024 / clients
    for p in passes:
        s = p["summary"]
        log(f"\n== many clients ({p['label']}): {clients} clients, {s['n']} events: p50 {s['median'] * 1000:.2f} ms, "
            f"p99 {s['p99'] * 1000:.2f} ms")
    log(f"   RSS {rss_before / 1024:.1f} → {rss_after / 1024:.1f} MiB ({per_client:.0f} bytes per client)")
    return {"clients": clients, "rounds": rounds, "passes": passes,
            "rss_before_kib": rss_before, "rss_after_kib": rss_after, "bytes_per_client": per_client}


# ---------------------------------------------------------------- 6. storm

def storm(args):
    """A flood of RATE useless responses/s for SECONDS from one namespace at a fresh daemon in another; every
    2 s during the flood a browse of a real service (a new type each time, so never cached) starts.

    The flood reaches every host on the link, the real services' advertiser too. With --storm-advertiser herald
    (the default) a second heraldd advertises them; with python-zeroconf, that library does, and its socket then
    drops much of the flood, at times a browser's query among it, which costs the browse a second query a second
    later. With --storm-sources N the flood comes from N addresses of its host in turn (20: 1,000 packets/s each at
    the default rate, what heraldd's per-source limit lets through)."""
    rate = args.storm_rate
    seconds = 8 if args.quick else 30
    lan = LAN(3)
    runs = []
    try:
        real_host, daemon_host, flood_host = lan.hosts
        # With --storm-sources N, the flood comes from N addresses of the flood host in turn, each below the
        # per-source limit at the default rate: only what heraldd does per packet can shed it.
        sources = [flood_host.ipv4]
        if args.storm_sources > 1:
            sources = [f"{IPV4_PREFIX}{50 + i}" for i in range(args.storm_sources)]
            for address in sources:
                flood_host.run(["ip", "address", "add", address + "/24", "dev", flood_host.interface])
        browses = seconds // 2 - 1
        if args.storm_advertiser == "herald":
            # Each daemon under test browses its own set of types.
            services = {f"real{t}x{b}.service": (
                f"<?xml version=\"1.0\" standalone=\"no\"?>\n<service-group><name>real{t} {b}</name><service>"
                f"<type>_real{t}x{b}._tcp</type><port>{1000 + b}</port></service></service-group>\n")
                for t in range(2) for b in range(browses)}
            advertiser = Herald(real_host, services=services)
            real = []
        else:
            advertiser = None
            real = [peer(real_host, "zc_advertise.py", real_host.ipv4, real_host.name, browses, browses,
                         f"real{t}", f"_real{t}x") for t in range(2)]
            for process in real:
                wait_ready(process, 60, "real services")
        time.sleep(3)  # probed and announced
        for index, (label, make) in enumerate((("Herald", lambda: Herald(daemon_host)),
                                               ("Avahi", lambda: Avahi(daemon_host)))):
            daemon = make()
            time.sleep(args.settle)
            drops0 = daemon_host.udp_drops()
            advertiser_drops0 = real_host.udp_drops()
            cpu0 = cpu_of(daemon)
            flood = peer(flood_host, "flood.py", flood_host.ipv4, rate, seconds, ",".join(sources))
            wait_ready(flood, 10, "flood")
            flood_start = time.monotonic()
            browse_results = []
            pending = []
            for b in range(browses):
                target = flood_start + 1 + 2 * b
                time.sleep(max(0, target - time.monotonic()))
                service_type = f"_real{index}x{b}._tcp"
                pending.append(daemon_host.spawn(daemon.browse_argv(service_type)))
            for process in pending:
                latency = first_add(daemon, process, max(0.1, process.started + 10 - time.monotonic()))
                browse_results.append(latency)
                process.stop(1, signal.SIGKILL)
            flood.wait(seconds + 30)
            flood_line = next((l for _, l in flood.stdout.lines if l.startswith("sent ")), "sent 0 1")
            sent, elapsed = int(flood_line.split()[1]), float(flood_line.split()[2])
            cpu = cpu_of(daemon) - cpu0
            wall = time.monotonic() - flood_start
            run = {"label": label, "sent": sent, "send_rate": sent / elapsed, "seconds": seconds,
                   "cpu_s": cpu, "cpu_fraction": cpu / wall, "peak_rss_kib": rss_kib(daemon, "VmHWM"),
                   "drops": daemon_host.udp_drops() - drops0, "browses": browse_results,
                   # The advertisers get the flood too: what their sockets drop (a browser's query among it) is theirs.
                   "advertiser_drops": real_host.udp_drops() - advertiser_drops0,
                   "browses_ok": sum(1 for b in browse_results if b is not None),
                   "browses_within_0_2_s": sum(1 for b in browse_results if b is not None and b <= 0.2),
                   "sources": len(sources)}
            if isinstance(daemon, Herald):
                run["status"] = herald_status(daemon)
            daemon.stop()
            runs.append(run)
            ok = [b for b in browse_results if b is not None]
            log(f"  {label}: flood {sent} packets ({sent / elapsed:.0f}/s); daemon CPU {cpu:.1f} s "
                f"({100 * cpu / wall:.0f} % of a core), peak RSS {run['peak_rss_kib'] / 1024:.1f} MiB, "
                f"socket drops {run['drops']} (the advertisers' {run['advertiser_drops']}); browses during the flood: "
                f"{len(ok)}/{len(browse_results)} succeeded ({run['browses_within_0_2_s']} within 0.2 s), "
                f"median {fmt(summary(ok)['median'])}, "
                f"each {[None if b is None else round(b, 2) for b in browse_results]}")
            time.sleep(6)  # let the flood's short-lived records expire before the next daemon
        if advertiser is not None:
            advertiser.stop()
    finally:
        lan.close()
    return {"rate": rate, "seconds": seconds, "advertiser": args.storm_advertiser, "sources": args.storm_sources,
            "runs": runs}


def office_load(args):
    """A busy office's LAN: see office.py."""
    return office.office(args, advertise_many, herald_status)


def dbus_api(args):
    """Avahi's D-Bus API through heraldd and avahi-daemon: see dbus_clients.py."""
    return dbus_clients.dbus_api(args, advertise_many)


BENCHMARKS = {"cold_browse": cold_browse, "time_to_visible": time_to_visible, "scale": scale,
              "footprint": footprint, "many_clients": many_clients, "storm": storm, "office": office_load,
              "dbus": dbus_api}


def machine_load():
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    return {"loadavg": load, "cpus": os.cpu_count(), "kernel": platform.release()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="*", choices=list(BENCHMARKS) + [[]], default=[])
    parser.add_argument("--quick", action="store_true", help="fewer trials and smaller loads (a smoke run)")
    parser.add_argument("--trials", type=int, default=25, help="trials of the latency benchmarks (default 25)")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds a fresh daemon gets after start before it is measured (default 1)")
    parser.add_argument("--storm-rate", type=int, default=20000, help="flood packets per second (default 20000)")
    parser.add_argument("--storm-sources", type=int, default=1, choices=range(1, 201), metavar="N",
                        help="source addresses the flood comes from, in turn (1 to 200; default 1)")
    parser.add_argument("--storm-advertiser", choices=["herald", "python-zeroconf"], default="herald",
                        help="what advertises the real services the storm's browses look for (default herald)")
    parser.add_argument("--herald-cache", type=int, default=0, metavar="N",
                        help="office: run heraldd with cache-entries-per-interface = N (default: its own default)")
    parser.add_argument("--office-shape", choices=["office", "office10x"], default="office",
                        help="office: 2,000 instances, 20 types, 5 peer hosts, 20 clients (default); "
                             "office10x: 20,000, 200, 10, 200 (one client per type)")
    parser.add_argument("--dbus-window", type=int, default=256, metavar="N",
                        help="dbus: ServiceResolvers a client keeps in flight (default 256; each daemon allows 1,024 "
                             "objects per client)")
    parser.add_argument("--out", default="comparative-results.json")
    args = parser.parse_args()
    chosen = args.benchmarks or list(BENCHMARKS)
    for path in (HERALD,):
        if not os.path.exists(path):
            raise SystemExit(f"{path} is missing: swift build -c release --static-swift-stdlib --product heraldd --product herald")
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "quick": args.quick,
               "load_before": machine_load(), "benchmarks": {}}
    if os.path.exists(args.out):
        with open(args.out) as f:
            previous = json.load(f)
        if previous.get("quick") == args.quick:
            results["benchmarks"] = previous.get("benchmarks", {})
    for name in chosen:
        log(f"\n### {name}")
        started = time.monotonic()
        load = machine_load()
        outcome = BENCHMARKS[name](args)
        outcome["load_at_start"] = load
        outcome["wall_s"] = time.monotonic() - started
        outcome["measured"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        results["benchmarks"][name] = outcome
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    log(f"\nresults written to {args.out}")


if __name__ == "__main__":
    main()
