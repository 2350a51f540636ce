#!/usr/bin/env python3
"""Profiles which of heraldd's functions run, and writes the link order that packs them together.

    profile.py HERALDD ORDER_FILE

Runs HERALDD (a release build) under Valgrind's callgrind on a LAN of network namespaces (the comparative
benchmarks' LAN), and gives it a day's work in small: start-up, a spell of idling, then two peers advertising 600
instances of 12 types that an app browses and resolves through the app socket, services registered by apps (probed,
announced, then found and queried by a python-zeroconf browser on another host), and operators' status and log
requests. It writes ORDER_FILE, one symbol per line: the functions an idle heraldd runs (from its last release of
pages on: callgrind dumps as each release begins), then those that each phase of serving ran that had not run in an
earlier one, then those that ran only at start-up. heraldd's release link places the code in that order (see
Package.swift), so that what serving runs sits together in few pages instead of being spread over the binary, where
every first call maps a page of its own (or, on kernels older than 6.7, the 64 KiB around it). (The standard
library's archive keeps many functions in one section, which moves as a whole: the ordered part of the binary is a
few megabytes, not just the functions listed.)

Run as root (namespaces). Scripts/hot-code/update.sh builds heraldd and calls this."""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARATIVE = os.path.join(HERE, "..", "..", "Benchmarks", "Comparative")
sys.path.insert(0, COMPARATIVE)
import dnssd_ipc  # noqa: E402
from lan import LAN  # noqa: E402
from scale_ipc import discover_all_ipc  # noqa: E402

PEERS = os.path.join(COMPARATIVE, "peers")
# The dumps asked for by name, one at the end of each phase.
PHASES = ["startup", "idle", "browse", "register", "operate"]
# The services the peers advertise, over this many types.
INSTANCES, TYPES = 600, 12


def executed_functions(callgrind_file, object_path):
    """The functions of `object_path` with a cost in one callgrind dump, in the order the dump names them."""
    objects, names, functions = {}, {}, {}
    current_object = None
    pattern = re.compile(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")
    with open(callgrind_file, errors="replace") as dump:
        for line in dump:
            match = pattern.match(line.rstrip("\n"))
            if not match:
                continue
            kind, number, name = match.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[number] = name
            if kind == "ob":
                current_object = objects.get(number)
            elif kind == "fn" and current_object == object_path:
                # Callgrind marks recursion levels with 'N; the symbol is the same.
                functions.setdefault(re.sub(r"'\d+$", "", names[number]), None)
    return list(functions)


def dump_label(callgrind_file):
    """The name a dump was asked for by (`callgrind_control --dump=NAME`), or None for one callgrind made itself."""
    with open(callgrind_file, errors="replace") as dump:
        for line in dump:
            if line.startswith("desc: Trigger: dump "):
                return line[len("desc: Trigger: dump "):].strip()
            if line.startswith(("fn=", "ob=")):
                break
    return None


def defined_symbols(binary):
    result = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True)
    return {parts[2] for parts in (line.split() for line in result.stdout.splitlines()) if len(parts) == 3}


def wait_for(path, process, timeout, what):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if not process.running() or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start:\n{process.stderr.text()}")
        time.sleep(0.1)


def dump(pid, label):
    subprocess.run(["callgrind_control", "--dump=" + label, str(pid)], check=True, capture_output=True)


def browse_and_resolve(socket_path):
    """Apps browse and resolve the peers' services through the app socket."""
    found = discover_all_ipc(socket_path, TYPES, INSTANCES, 900)
    if found["resolved"] < INSTANCES:
        raise RuntimeError(f"the profiled heraldd resolved only {found['resolved']} of {INSTANCES} instances")


def register_and_answer(lan, socket_path):
    """Apps register services, which a python-zeroconf browser on another host then finds and queries."""
    registrations = []
    for index in range(8):
        sock = dnssd_ipc.connect(socket_path)
        sock.sendall(dnssd_ipc.register_request(f"Profiled {index}", "_hprofile._tcp", 7000 + index, b"\x05key=1"))
        registrations.append(sock)
    watcher = lan.hosts[0].spawn([sys.executable, os.path.join(PEERS, "zc_watch.py"), lan.hosts[0].ipv4,
                                  "_hprofile._tcp"])
    deadline = time.monotonic() + 600
    while len([line for _, line in watcher.stdout.lines if line.startswith("add ")]) < 8:
        if time.monotonic() > deadline:
            raise RuntimeError("the peer did not find the profiled registrations")
        time.sleep(0.5)
    watcher.stop(2)
    for sock in registrations:
        sock.close()
    time.sleep(5)  # goodbyes for the registrations


def operate(herald_host, control_path, herald_binary_dir):
    """Operators' requests on the control socket."""
    herald = os.path.join(herald_binary_dir, "herald")
    for command in (["status"], ["status", "--json"], ["log"], ["app", "list"], ["requests"]):
        herald_host.run([herald] + command + ["--control-socket", control_path], timeout=300)


def main():
    heraldd, order_file = os.path.abspath(sys.argv[1]), sys.argv[2]
    work = tempfile.mkdtemp(prefix="herald-hot-code-")
    # Valgrind cannot read the debug information the Swift toolchain writes; the symbol table is enough.
    profiled = os.path.join(work, "heraldd")
    subprocess.run(["strip", "--strip-debug", "-o", profiled, heraldd], check=True)
    lan = LAN(3)
    try:
        herald_host = lan.hosts[2]
        advertisers = [host.spawn([sys.executable, os.path.join(PEERS, "zc_advertise.py"), host.ipv4, host.name,
                                   str(INSTANCES // 2), str(TYPES), f"hot{index}"])
                       for index, host in enumerate(lan.hosts[:2])]
        for advertiser in advertisers:
            while not any(line.startswith("READY") for _, line in advertiser.stdout.lines):
                if not advertiser.running():
                    raise RuntimeError("advertiser failed:\n" + advertiser.stderr.text())
                time.sleep(0.2)
        d = herald_host.directory
        state = f"{d}/state"
        for sub in ("", "/apps", "/services"):
            os.makedirs(state + sub, exist_ok=True)
        socket_path, control_path = f"{d}/heraldd.sock", f"{d}/heraldd-control.sock"
        out = os.path.join(work, "callgrind.out")
        daemon = herald_host.spawn([
            "valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--dump-before=herald_release_file_pages",
            profiled,
            "--hostname", herald_host.name, "--socket", socket_path, "--control-socket", control_path,
            "--state-dir", state, "--apps-dir", state + "/apps", "--services-dir", state + "/services",
            "--nss-socket", f"{d}/heraldd-nss.sock", "--interface", herald_host.interface, "--log-level", "warning"])
        wait_for(socket_path, daemon, 600, "heraldd under callgrind")
        # One dump per phase: each holds what ran since the one before.
        dump(daemon.pid, "startup")
        time.sleep(20)  # the host name probed and announced, then idle: the loop's timers, the pages given back
        dump(daemon.pid, "idle")
        browse_and_resolve(socket_path)
        dump(daemon.pid, "browse")
        register_and_answer(lan, socket_path)
        dump(daemon.pid, "register")
        operate(herald_host, control_path, os.path.dirname(heraldd))
        dump(daemon.pid, "operate")
        daemon.stop(60, signal.SIGTERM)
    finally:
        lan.close()
    # Dumps are numbered in the order they were made. Besides the five asked for by name, callgrind makes one as
    # each release of pages begins (--dump-before): so the one named "idle" holds exactly what ran from the last
    # release on, which is what an idle heraldd keeps resident.
    dumps = sorted((name for name in os.listdir(work) if re.fullmatch(r"callgrind\.out\.\d+", name)),
                   key=lambda name: int(name.rsplit(".", 1)[1]))
    segments, current = {}, []
    for name in dumps:
        current.append(os.path.join(work, name))
        label = dump_label(current[-1])
        if label:
            segments[label], current = current, []
    if sorted(segments) != sorted(PHASES):
        raise RuntimeError(f"callgrind's dumps in {work} are not the phases {PHASES}: {sorted(segments)}")
    phases = {label: [executed_functions(path, profiled) for path in paths] for label, paths in segments.items()}
    shutil.rmtree(work)
    # What an idle heraldd runs comes first (it is all that stays resident between bursts of work), then what the
    # most common work runs, each later phase adding what it runs that the ones before did not, and what ran only
    # at start-up (with the host name's announcements and the first releases) comes last. Within a phase,
    # callgrind's order keeps each source file's functions together, and so the functions that work together.
    idle, settling = phases["idle"][-1], phases["idle"][:-1]
    serving = [functions for label in ("browse", "register", "operate") for functions in phases[label]]
    sequence = [idle] + serving + phases["startup"] + settling
    order = {}
    for functions in sequence:
        for name in functions:
            order.setdefault(name, None)
    symbols = defined_symbols(heraldd)
    written = [name for name in order if name in symbols]
    with open(order_file, "w") as output:
        output.write("\n".join(written) + "\n")
    ran_serving = len(set(idle).union(*serving))
    print(f"{len(idle)} functions ran while idle, {ran_serving} while idle or serving, {len(order) - ran_serving} more "
          f"only at start-up; {len(written)} symbols written to {order_file}")


if __name__ == "__main__":
    main()
