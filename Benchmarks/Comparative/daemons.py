"""Starting heraldd and avahi-daemon in a LAN host, and reading their CPU time and memory from /proc."""

import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("HERALD_BIN", os.path.join(REPO, ".build", "release"))
HERALDD = os.path.join(BIN, "heraldd")
HERALD = os.path.join(BIN, "herald")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def status_kib(pid, key):
    """A field of /proc/PID/status in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def children(pid):
    """PIDs whose parent is pid."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


class Herald:
    """heraldd with its default configuration, its paths in the host's directory."""

    label = "Herald"

    def __init__(self, host, extra=(), services=None):
        """`services` maps file names to static service definitions the daemon publishes from its start."""
        self.host = host
        d = host.directory
        stamp = f"{time.monotonic_ns() % 10**9}"
        self.socket = f"{d}/heraldd-{stamp}.sock"
        self.control_socket = f"{d}/heraldd-control-{stamp}.sock"
        state = f"{d}/herald-state-{stamp}"
        for sub in ("", "/apps", "/services"):
            os.makedirs(state + sub, exist_ok=True)
        for name, text in (services or {}).items():
            with open(f"{state}/services/{name}", "w") as f:
                f.write(text)
        argv = [HERALDD, "--hostname", host.name, "--socket", self.socket,
                "--control-socket", self.control_socket, "--state-dir", state,
                "--apps-dir", state + "/apps", "--services-dir", state + "/services",
                "--nss-socket", f"{d}/heraldd-nss-{stamp}.sock", "--interface", host.interface,
                "--log-level", "warning"] + list(extra)
        self.process = host.spawn(argv)
        deadline = time.monotonic() + 15
        while not os.path.exists(self.socket):
            if not self.process.running() or time.monotonic() > deadline:
                self.process.stop(1)
                raise RuntimeError("heraldd did not open its socket: " + self.process.stderr.text())
            time.sleep(0.005)
        self.ready_at = time.monotonic()
        self.pids = [self.process.pid]

    def cli(self, args):
        return [HERALD] + list(args) + ["--socket", self.socket]

    def control(self, args):
        """A `herald` operator command (status, grant, …) on this daemon's control socket."""
        return [HERALD] + list(args) + ["--control-socket", self.control_socket]

    def browse_argv(self, service_type, resolve=False):
        return self.cli(["browse", service_type, "--json"] + (["--resolve"] if resolve else []))

    def register_argv(self, name, service_type, port):
        return self.cli(["register", name, service_type, str(port)])

    @staticmethod
    def is_add(line):
        return '"+"' in line or '"added"' in line or line.startswith("+")

    @staticmethod
    def is_resolved(line):
        return '"port"' in line

    def stop(self):
        self.process.stop(3)


class Avahi:
    """avahi-daemon as Debian runs it (drops root, chroots; a helper process) with its own dbus-daemon.

    The configuration is Debian's default one plus this host's name and interface."""

    label = "Avahi"

    def __init__(self, host, cache_entries_max=None):
        self.host = host
        extra = f"cache-entries-max={cache_entries_max}\n" if cache_entries_max else ""
        config = (f"[server]\nhost-name={host.name}\nuse-ipv4=yes\nuse-ipv6=yes\n"
                  f"allow-interfaces={host.interface}\nratelimit-interval-usec=1000000\n"
                  f"ratelimit-burst=1000\n{extra}\n[wide-area]\nenable-wide-area=yes\n\n"
                  "[publish]\npublish-hinfo=no\npublish-workstation=no\n\n[reflector]\n\n[rlimits]\n")
        path = f"{host.directory}/avahi-daemon-{time.monotonic_ns() % 10**9}.conf"
        with open(path, "w") as f:
            f.write(config)
        if not any("dbus-daemon" in " ".join(p.argv) and p.running() for p in host.processes):
            host.run(["rm", "-f", "/run/dbus/system_bus_socket", "/run/dbus/pid"])
            self.bus = host.spawn(["dbus-daemon", "--system", "--nofork", "--nopidfile", "--nosyslog",
                                   "--print-address"])
            if self.bus.stdout.wait_for(lambda l: "unix:path=" in l, 10) is None:
                raise RuntimeError("dbus-daemon did not start: " + self.bus.stderr.text())
        else:
            self.bus = next(p for p in host.processes if "dbus-daemon" in " ".join(p.argv) and p.running())
        host.run(["rm", "-f", "/run/avahi-daemon/pid", "/run/avahi-daemon/socket"])
        # No static services of this machine leak in: an empty directory of this host's own.
        services = f"{host.directory}/avahi-services"
        if not os.path.isdir(services):
            os.makedirs(services)
            host.run(["mount", "--bind", services, "/etc/avahi/services"])
        self.process = host.spawn(["avahi-daemon", "-f", path, "--no-rlimits"])
        if self.process.stderr.wait_for(lambda l: "Server startup complete" in l, 20) is None:
            self.process.stop(1)
            raise RuntimeError("avahi-daemon did not start: " + self.process.stderr.text())
        self.ready_at = time.monotonic()
        self.pids = [self.process.pid] + children(self.process.pid)

    def browse_argv(self, service_type, resolve=False):
        return ["avahi-browse", "-p"] + (["-r"] if resolve else []) + [service_type]

    def register_argv(self, name, service_type, port):
        return ["avahi-publish", "-s", name, service_type, str(port)]

    @staticmethod
    def is_add(line):
        return line.startswith("+;")

    @staticmethod
    def is_resolved(line):
        return line.startswith("=;")

    def stop(self):
        self.process.stop(3)


def rollup_kib(pid, key):
    """A field of /proc/PID/smaps_rollup in KiB (Pss, Anonymous)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_breakdown(daemon):
    """RSS, PSS and anonymous memory of all the daemon's processes, and the sum of their peak RSS so far (VmHWM),
    in KiB."""
    pids = [pid for pid in daemon.pids if os.path.exists(f"/proc/{pid}")]
    return {"rss_kib": sum(status_kib(p, "VmRSS") for p in pids),
            "peak_kib": sum(status_kib(p, "VmHWM") for p in pids),
            "pss_kib": sum(rollup_kib(p, "Pss") for p in pids),
            "anon_kib": sum(rollup_kib(p, "Anonymous") for p in pids)}


def cpu_of(daemon):
    return sum(cpu_seconds(pid) for pid in daemon.pids if os.path.exists(f"/proc/{pid}"))


def rss_kib(daemon, key="VmRSS"):
    return sum(status_kib(pid, key) for pid in daemon.pids if os.path.exists(f"/proc/{pid}"))
