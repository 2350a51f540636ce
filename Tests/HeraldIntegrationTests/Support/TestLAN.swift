import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A throwaway Ethernet LAN of network namespaces, for mDNS tests with real peers.
///
/// Layout for a run with id `3fa2` (each run picks a fresh random id):
///
///     netns hlan3fa2-br   bridge hlan3fa2br (mcast_snooping 0)
///                         ports hlan3fa2h0p0, hlan3fa2h1p0, …
///     netns hlan3fa2-h0   hlan3fa2h0e0  10.213.47.10/24  fd48:6572:616c::10/64  fe80::…
///     netns hlan3fa2-h1   hlan3fa2h1e0  10.213.47.11/24  fd48:6572:616c::11/64  fe80::…
///
/// Every host also has a *holder* process that keeps a private mount namespace
/// with a tmpfs on `/run` (and a sysfs of its own network namespace on `/sys`),
/// so that avahi-daemon and a `dbus-daemon --system` can run in every host
/// without sharing their fixed paths under `/run`. Commands run in a host are
/// started with `nsenter -t HOLDER -n -m`, as children of the test process
/// (not of the holder), and are all killed at shutdown.
///
/// Nothing of a LAN lives in the test process's own network namespace: the
/// veth pairs are created inside the bridge namespace with their host end
/// moved straight into the host namespace, and no mDNS traffic is ever sent
/// outside the LAN's namespaces.
///
/// `shutdown()` (idempotent; also run by `deinit`, at process exit and on
/// SIGINT/SIGTERM/SIGHUP) kills every process, deletes the namespaces and the
/// run's temporary directory. Namespaces left behind by a run that was killed
/// outright are swept when the next LAN is created.
final class TestLAN: @unchecked Sendable {
    /// The prefix of every namespace, interface and temporary directory name.
    static let namePrefix = "hlan"
    /// Where runs keep their files: `<root>/<id>/owner`, `<root>/<id>/<host>/`.
    static let stateRoot = "/tmp/herald-testlan"
    static let ipv4Prefix = "10.213.47."
    static let ipv4PrefixLength = 24
    static let ipv6Prefix = "fd48:6572:616c::"
    static let ipv6PrefixLength = 64

    /// The random id of this run (4 hex digits).
    let id: String
    /// `hlan<id>`: every name of this run starts with it.
    let prefix: String
    let bridgeNamespace: String
    let bridgeName: String
    /// The run's temporary directory.
    let directory: String
    private(set) var hosts: [Host] = []

    private let lock = NSLock()
    private var isShutDown = false
    /// What hosts share with their LAN (hosts do not reference the LAN itself,
    /// so a LAN is shut down by `deinit` as soon as the test drops it).
    fileprivate let shared: Shared

    /// Builds a LAN of `hosts` hosts. Throws (naming the package to install)
    /// when a required tool is missing; cleans up after itself when it fails.
    init(hosts count: Int) throws {
        precondition(count >= 0 && count < 100, "a TestLAN has 0 to 99 hosts")
        guard Requirements.isRoot else {
            throw HarnessError.setup("TestLAN needs root (network namespaces, veth pairs, mounts)")
        }
        try Requirements.check()
        // Sweeping and claiming under one lock: a sweep running while another LAN of this process has made
        // its directory but not yet written its owner file would take that directory for a dead run's.
        TestLAN.creationLock.lock()
        TestLAN.sweepStale()
        let claimed = Result { try TestLAN.claimRunID() }
        TestLAN.creationLock.unlock()
        let (id, directory) = try claimed.get()
        self.id = id
        self.directory = directory
        prefix = TestLAN.namePrefix + id
        bridgeNamespace = prefix + "-br"
        bridgeName = prefix + "br"
        shared = Shared(prefix: prefix, bridgeNamespace: bridgeNamespace, bridgeName: bridgeName, directory: directory)
        TestLANRegistry.shared.register(self)
        do {
            try createBridge()
            for index in 0..<count {
                guard !shared.isShutDown else { throw HarnessError.setup("TestLAN: shut down while being built") }
                let host = try Host(shared: shared, index: index)
                lock.lock()
                hosts.append(host)
                lock.unlock()
            }
        } catch {
            shutdown()
            throw error
        }
    }

    deinit {
        shutdown()
    }

    // MARK: Building

    private func createBridge() throws {
        try Command.check(["ip", "netns", "add", bridgeNamespace])
        // The bridge namespace forwards frames and takes no part in IP.
        try TestLAN.sysctl(
            namespace: bridgeNamespace,
            [
                "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
            ])
        try TestLAN.ip(in: bridgeNamespace, "link", "set", "lo", "up")
        try TestLAN.ip(in: bridgeNamespace, "link", "add", bridgeName, "type", "bridge", "mcast_snooping", "0")
        try TestLAN.ip(in: bridgeNamespace, "link", "set", bridgeName, "up")
    }

    /// `ip -n NAMESPACE ARGS…`, throwing on failure.
    @discardableResult
    fileprivate static func ip(in namespace: String, _ arguments: String...) throws -> CommandResult {
        try Command.check(["ip", "-n", namespace] + arguments)
    }

    fileprivate static func sysctl(namespace: String, _ settings: [String]) throws {
        let nsenter = try Requirements.requireExecutable("nsenter")
        let sysctl = Requirements.executable("sysctl")
        if let sysctl {
            try Command.check([nsenter, "--net=/run/netns/\(namespace)", "--", sysctl, "-q", "-w"] + settings)
        } else {
            // Without procps, write /proc/sys directly (it reflects the writer's network namespace).
            let script = settings.map { setting -> String in
                let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
                let path = "/proc/sys/" + parts[0].replacingOccurrences(of: ".", with: "/")
                return "echo \(parts[1]) > \(path)"
            }.joined(separator: " && ")
            try Command.check([nsenter, "--net=/run/netns/\(namespace)", "--", "/bin/sh", "-c", script])
        }
    }

    // MARK: Tearing down

    /// Kills every process of the LAN, deletes its namespaces and its temporary
    /// directory. Safe to call more than once and from any thread. When
    /// `graceful`, processes first get SIGTERM and up to 2 s to exit (Avahi and
    /// zeroconf send their goodbyes); otherwise they are killed at once.
    func shutdown(graceful: Bool = true) {
        lock.lock()
        if isShutDown {
            lock.unlock()
            return
        }
        isShutDown = true
        let hosts = self.hosts
        lock.unlock()
        shared.markShutDown()

        // Ask politely first (Avahi and zeroconf send goodbyes), newest first, all at once.
        let processes = hosts.flatMap { $0.trackedProcesses() }.reversed()
        for process in processes { process.send(graceful ? SIGTERM : SIGKILL) }
        let deadline = Date(timeIntervalSinceNow: 2)
        for process in processes {
            if process.waitForExit(timeout: max(0, deadline.timeIntervalSinceNow)) == nil {
                process.send(SIGKILL)
            }
        }
        // Then everything still in the run's namespaces, holders included (also
        // those of a host whose setup failed half-way, hence the listing).
        let namespaces = Set(hosts.map(\.name) + [bridgeNamespace])
            .union(TestLAN.namespaceNames().filter { $0.hasPrefix(prefix + "-") })
        for namespace in namespaces {
            TestLAN.killAll(inNamespace: namespace)
        }
        for host in hosts { host.reapHolder() }
        for namespace in namespaces {
            _ = try? Command.run(["ip", "netns", "delete", namespace])
        }
        try? FileManager.default.removeItem(atPath: directory)
        TestLANRegistry.shared.unregister(self)
    }

    /// SIGKILLs every process whose network namespace is `namespace`.
    fileprivate static func killAll(inNamespace namespace: String) {
        guard let result = try? Command.run(["ip", "netns", "pids", namespace]), result.succeeded else { return }
        let pids = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
        for pid in pids where pid > 1 && pid != getpid() {
            kill(pid, SIGKILL)
        }
        // Wait (briefly) until they are gone so the namespace can really go away.
        let deadline = Date(timeIntervalSinceNow: 2)
        for pid in pids {
            while kill(pid, 0) == 0, !isZombie(pid), Date() < deadline {
                usleep(10_000)
            }
        }
    }

    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[close...].dropFirst(2).first == "Z"
    }

    // MARK: Run ids, owners and the sweep of stale runs

    /// Serialises the sweep and the claim of LANs created at once by tests running in parallel.
    private static let creationLock = NSLock()

    /// Picks an unused id and claims it by creating its directory with an owner file.
    private static func claimRunID() throws -> (String, String) {
        try FileManager.default.createDirectory(
            atPath: stateRoot, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let existing = Set(namespaceNames())
        for _ in 0..<64 {
            let hex = String(UInt16.random(in: 0...UInt16.max), radix: 16)
            let id = String(repeating: "0", count: 4 - hex.count) + hex
            let directory = stateRoot + "/" + id
            if existing.contains(where: { $0.hasPrefix(namePrefix + id) }) { continue }
            guard mkdir(directory, 0o700) == 0 else { continue }
            let owner = "\(getpid()) \(processStartTime(getpid()) ?? "?")\n"
            try owner.write(toFile: directory + "/owner", atomically: true, encoding: .utf8)
            return (id, directory)
        }
        throw HarnessError.setup("TestLAN: no free run id under \(stateRoot)")
    }

    /// Field 22 of /proc/PID/stat, which tells a process from a later one with the same PID.
    private static func processStartTime(_ pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); field 22 is fields[19].
        return fields.count > 19 ? String(fields[19]) : nil
    }

    /// Whether the process that created run `id` is still alive.
    private static func ownerIsAlive(_ id: String) -> Bool {
        guard let owner = try? String(contentsOfFile: stateRoot + "/" + id + "/owner", encoding: .utf8) else {
            return false
        }
        let parts = owner.split(whereSeparator: \.isWhitespace).map(String.init)
        guard parts.count == 2, let pid = pid_t(parts[0]) else { return false }
        return processStartTime(pid) == parts[1]
    }

    /// A run directory without its owner file yet, made in the last minute: another process is claiming it.
    private static func isBeingClaimed(_ id: String) -> Bool {
        let directory = stateRoot + "/" + id
        guard !FileManager.default.fileExists(atPath: directory + "/owner"),
            let created = (try? FileManager.default.attributesOfItem(atPath: directory))?[.modificationDate] as? Date
        else { return false }
        return Date().timeIntervalSince(created) < 60
    }

    private static func namespaceNames() -> [String] {
        guard let result = try? Command.run(["ip", "netns", "list"]), result.succeeded else { return [] }
        // Lines look like "name (id: 3)" or "name".
        return result.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map(String.init)
        }
    }

    /// `hlan` followed by four hex digits: the run id of a name of ours, or nil.
    static func runID(of name: String) -> String? {
        guard name.hasPrefix(namePrefix) else { return nil }
        let rest = name.dropFirst(namePrefix.count)
        guard rest.count >= 4 else { return nil }
        let id = String(rest.prefix(4))
        guard id.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return id
    }

    /// Removes what runs whose process is gone left behind: their processes,
    /// namespaces, any interface of ours in this namespace, and their directories.
    /// Runs of live processes (a concurrent `swift test`) are left alone.
    static func sweepStale() {
        var stale = Set<String>()
        var namespacesByRun: [String: [String]] = [:]
        for name in namespaceNames() {
            guard let id = runID(of: name), name.hasPrefix(namePrefix + id + "-") else { continue }
            namespacesByRun[id, default: []].append(name)
        }
        for (id, namespaces) in namespacesByRun where !ownerIsAlive(id) {
            stale.insert(id)
            for namespace in namespaces { killAll(inNamespace: namespace) }
            for namespace in namespaces { _ = try? Command.run(["ip", "netns", "delete", namespace]) }
        }
        for link in rootLinkNames() {
            guard let id = runID(of: link), !ownerIsAlive(id) else { continue }
            _ = try? Command.run(["ip", "link", "delete", link])
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: stateRoot) {
            for id in entries where id.count == 4 && !ownerIsAlive(id) && !isBeingClaimed(id) {
                try? FileManager.default.removeItem(atPath: stateRoot + "/" + id)
            }
        }
    }

    /// Interface names in the test process's own network namespace.
    static func rootLinkNames() -> [String] {
        guard let result = try? Command.run(["ip", "-o", "link", "show"]), result.succeeded else { return [] }
        // "3: name@peer: <…> …"
        return result.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", maxSplits: 2)
            guard fields.count >= 2 else { return nil }
            let name = fields[1].trimmingCharacters(in: .whitespaces)
            return String(name.split(separator: "@").first ?? Substring(name))
        }
    }

    /// Names of this run still present in `ip netns list` and `ip link` (for teardown checks).
    func leftovers() -> [String] {
        (TestLAN.namespaceNames() + TestLAN.rootLinkNames()).filter { $0.hasPrefix(prefix) }
    }
}

// MARK: - Hosts

extension TestLAN {
    /// One interface of a host, joined to the LAN's bridge by a veth pair.
    struct Interface: Sendable, CustomStringConvertible {
        /// The name inside the host's namespace.
        var name: String
        /// The veth end enslaved to the bridge (in the bridge namespace).
        var bridgePort: String
        var ipv4: String
        /// The ULA address (added with `nodad`, usable at once).
        var ipv6: String
        /// The automatic fe80:: address (DAD is off in host namespaces).
        var linkLocal: String
        var index: Int32

        var description: String { "\(name) \(ipv4) \(ipv6) \(linkLocal)" }
    }

    /// A machine on the LAN: a network namespace plus a private `/run`.
    final class Host: @unchecked Sendable {
        private let lan: Shared
        let index: Int
        /// The network namespace's name (`hlan<id>-h<index>`), also the default Avahi host name.
        let name: String
        /// This host's own temporary directory (visible inside and outside the host).
        let directory: String
        /// The PID of the process holding the host's mount namespace.
        var holderPID: pid_t { holder.pid }

        private let holder: RunningProcess
        private let lock = NSLock()
        private var processes: [RunningProcess] = []
        private var interfaceList: [Interface] = []
        private var avahiDaemon: AvahiDaemon?
        private var scriptCounter = 0

        fileprivate init(shared lan: Shared, index: Int) throws {
            self.lan = lan
            self.index = index
            name = lan.prefix + "-h\(index)"
            directory = lan.directory + "/" + name
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Command.check(["ip", "netns", "add", name])
            // No duplicate address detection: addresses (link-local too) are usable at once.
            // No router solicitations: nothing answers them, they would only add noise.
            try TestLAN.sysctl(
                namespace: name,
                [
                    "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.all.router_solicitations=0", "net.ipv6.conf.default.router_solicitations=0",
                ])
            try TestLAN.ip(in: name, "link", "set", "lo", "up")
            holder = try Host.startHolder(namespace: name)
            _ = try addInterface()
        }

        /// The holder: enters the host's network namespace, unshares the mount
        /// namespace (private propagation), detaches the copy of /run/netns (so
        /// it pins no namespace), mounts a tmpfs on /run with the directories
        /// dbus-daemon and avahi-daemon expect, mounts this namespace's sysfs on
        /// /sys (as `ip netns exec` does), and then sleeps until killed.
        private static func startHolder(namespace: String) throws -> RunningProcess {
            let nsenter = try Requirements.requireExecutable("nsenter")
            let unshare = try Requirements.requireExecutable("unshare")
            let script = """
                umount -l /run/netns 2>/dev/null
                mount -t tmpfs -o mode=0755,size=64m herald-testlan /run || exit 1
                mkdir -p /run/dbus /run/avahi-daemon /run/lock /run/user || exit 1
                umount -l /sys 2>/dev/null && mount -t sysfs sysfs /sys
                echo holder-ready
                exec sleep infinity
                """
            let command = [
                nsenter, "--net=/run/netns/\(namespace)", "--",
                unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script,
            ]
            let holder = try RunningProcess(
                executable: nsenter, arguments: Array(command.dropFirst()), command: command)
            do {
                try holder.waitForOutput(containing: "holder-ready", in: .stdout, timeout: 10)
            } catch {
                holder.terminate(grace: 0.5)
                throw error
            }
            return holder
        }

        fileprivate func reapHolder() {
            holder.send(SIGKILL)
            holder.waitForExit(timeout: 2)
        }

        fileprivate func trackedProcesses() -> [RunningProcess] {
            lock.lock()
            defer { lock.unlock() }
            return processes
        }

        // MARK: Interfaces and addresses

        var interfaces: [Interface] {
            lock.lock()
            defer { lock.unlock() }
            return interfaceList
        }

        /// The first interface.
        var primary: Interface { interfaces[0] }
        /// The first interface's name.
        var interface: String { primary.name }
        var ipv4: String { primary.ipv4 }
        var ipv6: String { primary.ipv6 }
        var linkLocal: String { primary.linkLocal }

        /// Adds one more veth into the LAN's bridge, with its own IPv4 and IPv6
        /// addresses in the LAN's subnets (so the host then has two interfaces
        /// on one link). The new interface gets a higher-metric 224.0.0.0/4 route.
        @discardableResult
        func addInterface() throws -> Interface {
            let number = try lan.allocateAddressNumber()
            lock.lock()
            let slot = interfaceList.count
            lock.unlock()
            precondition(slot < 10, "at most 10 interfaces per host")
            let ifname = lan.prefix + "h\(index)e\(slot)"
            let port = lan.prefix + "h\(index)p\(slot)"
            let interface = try attach(
                ifname: ifname, port: port, ipv4: TestLAN.ipv4Prefix + "\(number)",
                ipv6: TestLAN.ipv6Prefix + "\(number)", metric: slot)
            lock.lock()
            interfaceList.append(interface)
            lock.unlock()
            return interface
        }

        /// Deletes an interface's veth pair (the host sees its link removed, as when an adapter is unplugged) and
        /// creates a new one with the same name and addresses (a new interface index, as when it is plugged back).
        @discardableResult
        func replaceInterface(_ old: Interface) throws -> Interface {
            try TestLAN.ip(in: name, "link", "delete", old.name)
            usleep(500_000)
            lock.lock()
            let slot = interfaceList.firstIndex { $0.name == old.name } ?? 0
            lock.unlock()
            let interface = try attach(
                ifname: old.name, port: old.bridgePort, ipv4: old.ipv4, ipv6: old.ipv6, metric: slot)
            lock.lock()
            if let at = interfaceList.firstIndex(where: { $0.name == old.name }) { interfaceList[at] = interface }
            lock.unlock()
            return interface
        }

        /// Creates a veth pair with one end in the bridge and the other, `ifname`, up in this host with its addresses.
        private func attach(ifname: String, port: String, ipv4: String, ipv6: String, metric slot: Int) throws
            -> Interface
        {
            try TestLAN.ip(
                in: lan.bridgeNamespace, "link", "add", port, "type", "veth", "peer", "name", ifname, "netns", name)
            try TestLAN.ip(in: lan.bridgeNamespace, "link", "set", port, "master", lan.bridgeName, "up")
            try TestLAN.ip(in: name, "address", "add", "\(ipv4)/\(TestLAN.ipv4PrefixLength)", "dev", ifname)
            try TestLAN.ip(in: name, "address", "add", "\(ipv6)/\(TestLAN.ipv6PrefixLength)", "dev", ifname, "nodad")
            try TestLAN.ip(in: name, "link", "set", ifname, "up")
            // Without a default route, multicast sent without IP_MULTICAST_IF (dig, plain sockets) needs one.
            try TestLAN.ip(in: name, "route", "add", "224.0.0.0/4", "dev", ifname, "metric", "\(slot)")
            let (linkLocal, ifindex) = try waitForLinkLocal(ifname)
            return Interface(
                name: ifname, bridgePort: port, ipv4: ipv4, ipv6: ipv6, linkLocal: linkLocal, index: ifindex)
        }

        private func waitForLinkLocal(_ ifname: String) throws -> (String, Int32) {
            let deadline = Date(timeIntervalSinceNow: 5)
            while true {
                let result = try TestLAN.ip(in: name, "-6", "-o", "address", "show", "dev", ifname, "scope", "link")
                // "4: name    inet6 fe80::…/64 scope link …"
                let fields = result.stdout.split(whereSeparator: \.isWhitespace)
                if let at = fields.firstIndex(of: "inet6"), at + 1 < fields.count,
                    let index = Int32(fields[0].dropLast())
                {
                    let address = fields[at + 1].split(separator: "/").first.map(String.init) ?? ""
                    if !result.stdout.contains("tentative") { return (address, index) }
                }
                if Date() > deadline {
                    throw HarnessError.setup("\(name): no usable link-local address on \(ifname):\n\(result.stdout)")
                }
                usleep(20_000)
            }
        }

        // MARK: Running things in the host

        /// The environment of commands run in the host.
        func environment(_ extra: [String: String] = [:]) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["LC_ALL"] = "C.UTF-8"
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/run/dbus/system_bus_socket"
            environment["HERALD_TEST_HOST"] = name
            environment.merge(extra) { $1 }
            return environment
        }

        /// Starts `argv` in the host (its network and mount namespaces) without waiting.
        /// The process is killed at the latest when the LAN shuts down.
        func spawn(_ argv: [String], environment extra: [String: String] = [:]) throws -> RunningProcess {
            guard let name = argv.first else { throw HarnessError.setup("empty command") }
            let nsenter = try Requirements.requireExecutable("nsenter")
            // Absolute paths: PATH lookups inside nsenter would depend on the runner's PATH.
            let executable = try Requirements.requireExecutable(name)
            lock.lock()
            defer { lock.unlock() }
            guard !lan.isShutDown else { throw HarnessError.setup("\(self.name): the LAN is shut down") }
            let arguments = ["-t", "\(holder.pid)", "-n", "-m", "--", executable] + argv.dropFirst()
            let process = try RunningProcess(
                executable: nsenter, arguments: arguments, command: argv, environment: environment(extra))
            processes.append(process)
            return process
        }

        /// Runs `argv` in the host to completion (killed at `timeout`).
        func run(_ argv: [String], timeout: TimeInterval = 30, environment extra: [String: String] = [:]) throws
            -> CommandResult
        {
            let process = try spawn(argv, environment: extra)
            let result = process.result(timeout: timeout)
            forget(process)
            return result
        }

        /// Like `run`, but throws with the output unless the command exits 0.
        @discardableResult
        func check(_ argv: [String], timeout: TimeInterval = 30, environment extra: [String: String] = [:]) throws
            -> CommandResult
        {
            let result = try run(argv, timeout: timeout, environment: extra)
            guard result.succeeded else { throw HarnessError.commandFailed(command: argv, result: result) }
            return result
        }

        private func forget(_ process: RunningProcess) {
            guard !process.isRunning else { return }
            lock.lock()
            processes.removeAll { $0 === process }
            lock.unlock()
        }

        /// Writes `text` to a new file in the host's directory and returns its path.
        func writeFile(named base: String, _ text: String) throws -> String {
            lock.lock()
            scriptCounter += 1
            let path = directory + "/\(scriptCounter)-" + base
            lock.unlock()
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        // MARK: Avahi

        /// The host's Avahi, once `startAvahi` has run.
        var avahi: AvahiDaemon? {
            lock.lock()
            defer { lock.unlock() }
            return avahiDaemon
        }

        /// Starts a `dbus-daemon --system` and an `avahi-daemon` in this host and
        /// waits until Avahi reports "Server startup complete" (its host name is
        /// then probed and announced). The configuration is written to the host's
        /// directory; `/etc/avahi/services` is replaced, in this host only, by an
        /// empty directory of its own (`AvahiDaemon.servicesDirectory`), so static
        /// services can be added per host and none of the machine's leak in.
        @discardableResult
        func startAvahi(
            hostName: String? = nil, interfaces: [String]? = nil,
            useIPv4: Bool = true, useIPv6: Bool = true, debug: Bool = false
        ) throws -> AvahiDaemon {
            if avahi != nil { throw HarnessError.setup("\(name): Avahi is already running") }
            let hostName = hostName ?? name
            let allowed = interfaces ?? self.interfaces.map(\.name)
            let config = """
                # Written by the Herald test harness for host \(name).
                [server]
                host-name=\(hostName)
                domain-name=local
                use-ipv4=\(useIPv4 ? "yes" : "no")
                use-ipv6=\(useIPv6 ? "yes" : "no")
                allow-interfaces=\(allowed.joined(separator: ","))
                enable-dbus=yes
                disallow-other-stacks=no
                ratelimit-interval-usec=1000000
                ratelimit-burst=1000

                [wide-area]
                enable-wide-area=no

                [publish]
                publish-addresses=yes
                publish-hinfo=no
                publish-workstation=no
                publish-domain=yes

                [reflector]
                enable-reflector=no

                [rlimits]

                """
            let configPath = try writeFile(named: "avahi-daemon.conf", config)
            let servicesDirectory = directory + "/avahi-services"
            try FileManager.default.createDirectory(atPath: servicesDirectory, withIntermediateDirectories: true)
            try check(["mount", "--bind", servicesDirectory, "/etc/avahi/services"])

            // avahi-browse, avahi-publish and avahi-resolve speak only D-Bus; the
            // bus socket lands in this host's private /run/dbus.
            let bus = try spawn(["dbus-daemon", "--system", "--nofork", "--nopidfile", "--nosyslog", "--print-address"])
            try bus.waitForOutput(containing: "unix:path=", in: .stdout, timeout: 10)

            // In the foreground (no -D), logging to the captured stderr. Avahi
            // 0.8 also starts here without these flags (it drops to the "avahi"
            // user and chroots to /etc/avahi, with a chroot helper process);
            // --no-drop-root --no-chroot keep it one process that can read its
            // files anywhere and does not depend on the "avahi" user;
            // --no-rlimits leaves the test process's limits alone.
            var arguments = [
                "avahi-daemon", "--no-drop-root", "--no-chroot", "--no-rlimits", "--no-proc-title", "-f", configPath,
            ]
            if debug { arguments.append("--debug") }
            let daemon: RunningProcess
            let log: String
            do {
                daemon = try spawn(arguments)
                log = try daemon.waitForOutput(containing: "Server startup complete", in: .stderr, timeout: 20)
            } catch {
                bus.terminate(grace: 1)
                throw error
            }
            let announced = AvahiDaemon.hostName(fromLog: log) ?? hostName
            let avahi = AvahiDaemon(
                hostName: announced, configPath: configPath, servicesDirectory: servicesDirectory,
                process: daemon, bus: bus)
            lock.lock()
            avahiDaemon = avahi
            lock.unlock()
            return avahi
        }

        // MARK: python-zeroconf

        /// Runs `script` with python3 and python-zeroconf in this host. Before
        /// the script runs, a prelude defines `HOST_NAME`, `HOST_INTERFACE`,
        /// `HOST_IPV4`, `HOST_IPV6`, `HOST_LINK_LOCAL`, imports `zeroconf`'s
        /// common names, opens `zc = Zeroconf(interfaces=[HOST_IPV4, HOST_IPV6])`
        /// (IPv4 only when `ipv6` is false, IPv6 only when `ipv4` is false), and
        /// provides `ready(msg)` (prints and flushes) and `wait_forever()`. SIGTERM
        /// exits cleanly: registered services are unregistered (goodbyes) and `zc` is closed.
        func startZeroconf(script: String, ipv4: Bool = true, ipv6: Bool = true, arguments: [String] = []) throws
            -> RunningProcess
        {
            guard let python = Requirements.python3WithZeroconf() else {
                throw Requirements.Missing(items: [
                    .init(
                        what: "python module `zeroconf` not importable by python3", package: "zeroconf",
                        installer: "python3 -m pip install")
                ])
            }
            precondition(ipv4 || ipv6, "python-zeroconf needs IPv4 or IPv6")
            let interfaces = ipv4 && ipv6 ? "[HOST_IPV4, HOST_IPV6]" : ipv4 ? "[HOST_IPV4]" : "[HOST_IPV6]"
            let version = ipv4 && ipv6 ? "IPVersion.All" : ipv4 ? "IPVersion.V4Only" : "IPVersion.V6Only"
            let prelude = """
                # Prelude written by the Herald test harness.
                import atexit, signal, socket, sys, time
                from zeroconf import (IPVersion, ServiceBrowser, ServiceInfo, ServiceListener,
                                      ServiceStateChange, Zeroconf)

                HOST_NAME = \(pythonString(name))
                HOST_INTERFACE = \(pythonString(interface))
                HOST_IPV4 = \(pythonString(ipv4 ? self.ipv4 : ""))
                HOST_IPV6 = \(pythonString(ipv6 ? self.ipv6 : ""))
                HOST_LINK_LOCAL = \(pythonString(linkLocal))

                def _harness_exit(signum, frame):
                    raise SystemExit(0)

                signal.signal(signal.SIGTERM, _harness_exit)
                signal.signal(signal.SIGINT, _harness_exit)

                zc = Zeroconf(interfaces=\(interfaces), ip_version=\(version))

                def _harness_close():
                    try:
                        zc.unregister_all_services()
                    finally:
                        zc.close()

                atexit.register(_harness_close)

                def ready(message="READY"):
                    print(message, flush=True)

                def wait_forever():
                    while True:
                        time.sleep(3600)

                # ---- test script ----

                """
            let path = try writeFile(named: "zeroconf.py", prelude + script + "\n")
            return try spawn([python, "-u", path] + arguments, environment: ["PYTHONDONTWRITEBYTECODE": "1"])
        }

        /// Runs a plain python3 script (no zeroconf prelude) in this host.
        func spawnPython(script: String, arguments: [String] = []) throws -> RunningProcess {
            guard let python = Requirements.python3WithZeroconf() ?? Requirements.python3() else {
                throw Requirements.Missing(items: [.init(what: "`python3` not found", package: "python3")])
            }
            let path = try writeFile(named: "script.py", script)
            return try spawn([python, "-u", path] + arguments, environment: ["PYTHONDONTWRITEBYTECODE": "1"])
        }
    }
}

/// An avahi-daemon started by `Host.startAvahi`, with its D-Bus system bus.
struct AvahiDaemon: Sendable {
    /// The host name Avahi announced (`hostName.local`), after any conflict renaming.
    var hostName: String
    var configPath: String
    /// Bind-mounted over `/etc/avahi/services` in the host: drop `.service` files here.
    var servicesDirectory: String
    var process: RunningProcess
    var bus: RunningProcess

    /// "Server startup complete. Host name is NAME.local. Local service cookie is …"
    static func hostName(fromLog log: String) -> String? {
        guard let range = log.range(of: "Host name is ", options: .backwards) else { return nil }
        let rest = log[range.upperBound...]
        guard let end = rest.range(of: ".local.") else { return nil }
        return String(rest[..<end.lowerBound])
    }
}

private func pythonString(_ text: String) -> String {
    var escaped = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": escaped += "\\\\"
        case "\"": escaped += "\\\""
        case "\n": escaped += "\\n"
        default:
            if scalar.value < 0x20 {
                escaped += String(format: "\\x%02x", scalar.value)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
    }
    return escaped + "\""
}

extension TestLAN {
    /// The part of a LAN its hosts need.
    fileprivate final class Shared: @unchecked Sendable {
        let prefix: String
        let bridgeNamespace: String
        let bridgeName: String
        let directory: String
        private let lock = NSLock()
        private var shutDown = false
        private var nextAddress = 10

        init(prefix: String, bridgeNamespace: String, bridgeName: String, directory: String) {
            self.prefix = prefix
            self.bridgeNamespace = bridgeNamespace
            self.bridgeName = bridgeName
            self.directory = directory
        }

        var isShutDown: Bool {
            lock.lock()
            defer { lock.unlock() }
            return shutDown
        }

        func markShutDown() {
            lock.lock()
            shutDown = true
            lock.unlock()
        }

        /// The next free host number: an interface's addresses are `10.213.47.N` and `fd48:6572:616c::N`.
        func allocateAddressNumber() throws -> Int {
            lock.lock()
            defer { lock.unlock() }
            guard nextAddress < 250 else { throw HarnessError.setup("TestLAN: out of addresses") }
            defer { nextAddress += 1 }
            return nextAddress
        }
    }
}

// MARK: - Cleanup on interruption

/// The write end of the pipe the signal handler writes the signal number to.
/// Set once, before the handler is installed; only read afterwards.
private nonisolated(unsafe) var interruptionPipe: Int32 = -1

/// Every live LAN of this process, so that they are torn down on SIGINT,
/// SIGTERM and SIGHUP (children run in their own process groups and would not
/// get a terminal's signal) and at `exit()`.
///
/// The handler only writes the signal number to a pipe (all a handler may
/// safely do); a thread reads it, shuts the LANs down without waiting for
/// goodbyes, restores the default action and re-sends the signal, so the test
/// process still dies of it. (A libdispatch signal source would not do on
/// Linux: it needs the signal ignored, and signalfd never sees ignored signals.)
final class TestLANRegistry: @unchecked Sendable {
    static let shared = TestLANRegistry()
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private struct WeakLAN { weak var lan: TestLAN? }
    private let lock = NSLock()
    private var lans: [ObjectIdentifier: WeakLAN] = [:]
    private var installed = false

    func register(_ lan: TestLAN) {
        lock.lock()
        defer { lock.unlock() }
        lans[ObjectIdentifier(lan)] = WeakLAN(lan: lan)
        guard !installed else { return }
        installed = true
        atexit { TestLANRegistry.shared.shutdownAll(graceful: false) }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        interruptionPipe = fds[1]
        let readEnd = fds[0]
        let thread = Thread {
            var signal: UInt8 = 0
            while read(readEnd, &signal, 1) != 1 {}
            TestLANRegistry.shared.shutdownAll(graceful: false)
            Glibc.signal(Int32(signal), SIG_DFL)
            kill(getpid(), Int32(signal))
            sleep(2)
            _exit(128 + Int32(signal))
        }
        thread.name = "TestLAN interruption cleanup"
        thread.start()
        for signal in TestLANRegistry.signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(interruptionPipe, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }

    func unregister(_ lan: TestLAN) {
        lock.lock()
        lans[ObjectIdentifier(lan)] = nil
        lock.unlock()
    }

    func shutdownAll(graceful: Bool) {
        lock.lock()
        let live = lans.values.compactMap(\.lan)
        lock.unlock()
        for lan in live { lan.shutdown(graceful: graceful) }
    }
}
