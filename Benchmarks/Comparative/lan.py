"""A throwaway Ethernet LAN of network namespaces for the comparative benchmarks.

Layout for a run with id ``3fa2``::

    netns hbch3fa2-br   bridge hbch3fa2br (mcast_snooping 0), ports hbch3fa2h0p0 ...
    netns hbch3fa2-h0   hbch3fa2h0e0  10.214.50.10/24  fd48:6272:6368::10/64
    netns hbch3fa2-h1   hbch3fa2h1e0  10.214.50.11/24  ...

Every host has a holder process keeping a private mount namespace with a tmpfs
on /run (so avahi-daemon and dbus-daemon find their fixed paths free) and its
own sysfs; commands run in a host with ``nsenter -t HOLDER -n -m``. No mDNS
traffic ever leaves the LAN's namespaces. ``LAN.close()`` (also run at exit and
on SIGINT/SIGTERM/SIGHUP) kills every process in the namespaces and deletes them.
Namespaces of an earlier run whose process is gone are swept on creation.
"""

import atexit
import os
import random
import shutil
import signal
import subprocess
import threading
import time

PREFIX = "hbch"
STATE_ROOT = "/tmp/herald-bench"
IPV4_PREFIX = "10.214.50."
IPV6_PREFIX = "fd48:6272:6368::"


def _run(argv, check=True):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def _namespaces():
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _kill_namespace_processes(namespace):
    out = _run(["ip", "netns", "pids", namespace], check=False).stdout
    pids = [int(p) for p in out.split() if p.isdigit()]
    for pid in pids:
        if pid > 1 and pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 2
    for pid in pids:
        while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.01)


def _owner_alive(run_id):
    try:
        with open(f"{STATE_ROOT}/{run_id}/owner") as f:
            pid, start = f.read().split()
        return _start_time(int(pid)) == start
    except (OSError, ValueError):
        return False


def _start_time(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def sweep_stale():
    """Deletes namespaces and directories of earlier runs whose process is gone."""
    for namespace in _namespaces():
        if namespace.startswith(PREFIX) and len(namespace) > len(PREFIX) + 4:
            run_id = namespace[len(PREFIX):len(PREFIX) + 4]
            if not _owner_alive(run_id):
                _kill_namespace_processes(namespace)
                _run(["ip", "netns", "delete", namespace], check=False)
    if os.path.isdir(STATE_ROOT):
        for run_id in os.listdir(STATE_ROOT):
            if not _owner_alive(run_id):
                shutil.rmtree(f"{STATE_ROOT}/{run_id}", ignore_errors=True)


class Output:
    """The lines a process writes, each with the CLOCK_MONOTONIC time it was read."""

    def __init__(self, stream):
        self.lines = []
        self.cond = threading.Condition()
        self.closed = False
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream):
        for raw in iter(stream.readline, b""):
            now = time.monotonic()
            with self.cond:
                self.lines.append((now, raw.decode("utf-8", "replace").rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait_for(self, predicate, timeout, start=0):
        """The first (time, line) from index `start` on that satisfies `predicate`, or None at timeout."""
        deadline = time.monotonic() + timeout
        index = start
        with self.cond:
            while True:
                while index < len(self.lines):
                    if predicate(self.lines[index][1]):
                        return self.lines[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.closed:
                    return None
                self.cond.wait(remaining)

    def text(self):
        with self.cond:
            return "\n".join(line for _, line in self.lines)


class Process:
    """A process started in a host; its PID is the program's own (nsenter execs it)."""

    def __init__(self, argv, popen, started):
        self.argv = argv
        self.popen = popen
        self.pid = popen.pid
        self.started = started
        self.stdout = Output(popen.stdout)
        self.stderr = Output(popen.stderr)

    def running(self):
        return self.popen.poll() is None

    def stop(self, grace=3.0, sig=signal.SIGTERM):
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(sig)
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
            except ProcessLookupError:
                pass
        return self.popen.returncode

    def wait(self, timeout=None):
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class Host:
    """One machine on the LAN: a network namespace and a private /run."""

    def __init__(self, lan, index):
        self.lan = lan
        self.index = index
        self.name = f"{lan.prefix}-h{index}"
        self.directory = f"{lan.directory}/{self.name}"
        os.makedirs(self.directory, exist_ok=True)
        self.processes = []
        _run(["ip", "netns", "add", self.name])
        self._sysctl(["net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                      "net.ipv6.conf.all.router_solicitations=0",
                      "net.ipv6.conf.default.router_solicitations=0"])
        _run(["ip", "-n", self.name, "link", "set", "lo", "up"])
        self.holder = self._start_holder()
        number = 10 + index
        self.interface = f"{lan.prefix}h{index}e0"
        port = f"{lan.prefix}h{index}p0"
        self.ipv4 = IPV4_PREFIX + str(number)
        self.ipv6 = IPV6_PREFIX + str(number)
        br = lan.bridge_namespace
        _run(["ip", "-n", br, "link", "add", port, "type", "veth", "peer", "name", self.interface,
              "netns", self.name])
        _run(["ip", "-n", br, "link", "set", port, "master", lan.bridge, "up"])
        _run(["ip", "-n", self.name, "address", "add", self.ipv4 + "/24", "dev", self.interface])
        _run(["ip", "-n", self.name, "address", "add", self.ipv6 + "/64", "dev", self.interface, "nodad"])
        _run(["ip", "-n", self.name, "link", "set", self.interface, "up"])
        _run(["ip", "-n", self.name, "route", "add", "224.0.0.0/4", "dev", self.interface])
        deadline = time.monotonic() + 5
        while "fe80" not in _run(["ip", "-n", self.name, "-6", "address", "show", "dev", self.interface,
                                  "scope", "link"]).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no link-local address")
            time.sleep(0.02)

    def _sysctl(self, settings):
        _run(["nsenter", f"--net=/run/netns/{self.name}", "--", "sysctl", "-q", "-w"] + settings)

    def _start_holder(self):
        script = ("umount -l /run/netns 2>/dev/null; "
                  "mount -t tmpfs -o mode=0755,size=64m herald-bench /run || exit 1; "
                  "mkdir -p /run/dbus /run/avahi-daemon /run/lock /run/user || exit 1; "
                  "umount -l /sys 2>/dev/null && mount -t sysfs sysfs /sys; "
                  "echo holder-ready; exec sleep infinity")
        argv = ["nsenter", f"--net=/run/netns/{self.name}", "--", "unshare", "--mount", "--propagation",
                "private", "--", "/bin/sh", "-c", script]
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        holder = Process(argv, popen, time.monotonic())
        if holder.stdout.wait_for(lambda l: "holder-ready" in l, 10) is None:
            holder.stop(0.5, signal.SIGKILL)
            raise RuntimeError(f"{self.name}: holder did not start: {holder.stderr.text()}")
        return holder

    def spawn(self, argv, env=None, stdin=subprocess.DEVNULL):
        """Starts argv (absolute path looked up here) in the host; returns a Process."""
        executable = shutil.which(argv[0]) or argv[0]
        environment = dict(os.environ)
        environment.update({"LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
                            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/run/dbus/system_bus_socket"})
        environment.update(env or {})
        full = ["nsenter", "-t", str(self.holder.pid), "-n", "-m", "--", executable] + list(argv[1:])
        started = time.monotonic()
        popen = subprocess.Popen(full, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=environment, start_new_session=True)
        process = Process(argv, popen, started)
        self.processes.append(process)
        return process

    def run(self, argv, timeout=30):
        process = self.spawn(argv)
        if process.wait(timeout) is None:
            process.stop(0.5, signal.SIGKILL)
        process.stdout.wait_for(lambda l: False, 2)  # let the readers drain
        return process

    def udp_drops(self):
        """Sum of the drops column of /proc/net/udp and udp6 for sockets on port 5353 in this host."""
        total = 0
        for table in ("udp", "udp6"):
            text = self.run(["cat", f"/proc/net/{table}"]).stdout.text()
            for line in text.splitlines()[1:]:
                fields = line.split()
                if len(fields) >= 13 and fields[1].endswith(":14E9"):
                    total += int(fields[12])
        return total


class LAN:
    def __init__(self, hosts):
        if os.geteuid() != 0:
            raise SystemExit("the benchmarks need root (network namespaces, veth pairs, mounts)")
        os.makedirs(STATE_ROOT, mode=0o700, exist_ok=True)
        sweep_stale()
        existing = _namespaces()
        for _ in range(64):
            run_id = f"{random.randrange(0x10000):04x}"
            if not any(n.startswith(PREFIX + run_id) for n in existing):
                try:
                    os.mkdir(f"{STATE_ROOT}/{run_id}", 0o700)
                    break
                except FileExistsError:
                    continue
        else:
            raise RuntimeError("no free run id")
        self.id = run_id
        self.prefix = PREFIX + run_id
        self.directory = f"{STATE_ROOT}/{run_id}"
        with open(self.directory + "/owner", "w") as f:
            f.write(f"{os.getpid()} {_start_time(os.getpid())}\n")
        os.chmod(self.directory, 0o755)
        self.bridge_namespace = self.prefix + "-br"
        self.bridge = self.prefix + "br"
        self.hosts = []
        self._closed = False
        atexit.register(self.close)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        try:
            _run(["ip", "netns", "add", self.bridge_namespace])
            _run(["nsenter", f"--net=/run/netns/{self.bridge_namespace}", "--", "sysctl", "-q", "-w",
                  "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
            _run(["ip", "-n", self.bridge_namespace, "link", "set", "lo", "up"])
            _run(["ip", "-n", self.bridge_namespace, "link", "add", self.bridge, "type", "bridge",
                  "mcast_snooping", "0"])
            _run(["ip", "-n", self.bridge_namespace, "link", "set", self.bridge, "up"])
            for index in range(hosts):
                self.hosts.append(Host(self, index))
        except BaseException:
            self.close()
            raise

    def _on_signal(self, signum, frame):
        self.close()
        raise SystemExit(128 + signum)

    def close(self):
        if self._closed:
            return
        self._closed = True
        for host in self.hosts:
            for process in reversed(host.processes):
                if process.running():
                    try:
                        process.popen.kill()
                    except ProcessLookupError:
                        pass
        namespaces = {h.name for h in self.hosts} | {self.bridge_namespace}
        namespaces |= {n for n in _namespaces() if n.startswith(self.prefix + "-")}
        for namespace in namespaces:
            _kill_namespace_processes(namespace)
        for host in self.hosts:
            host.holder.stop(1, signal.SIGKILL)
        for namespace in namespaces:
            _run(["ip", "netns", "delete", namespace], check=False)
        shutil.rmtree(self.directory, ignore_errors=True)
