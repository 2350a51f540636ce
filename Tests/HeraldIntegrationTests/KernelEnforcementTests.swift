import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Kernel enforcement (docs/enforcement.md) on a namespaced LAN: an app process in a cgroup of its own (a system
/// unit a manifest names), run as an unprivileged user, probing a peer over every path while an operator grants
/// and denies it, and heraldd started, stopped and killed.
@Suite(
    "Kernel enforcement of local-network access", .serialized,
    .enabled(if: Requirements.isRoot, Requirements.notRootReason))
struct KernelEnforcementTests {
    @Test("Not granted: no path reaches the LAN; granted: all do, live; denied: an open connection stops in 1 s")
    func grantAndDeny() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        let agent = try lab.startAgent()

        // Not granted (not determined): every LAN path fails at once; the routed outside address still works.
        let held = try lab.waitForRound(
            of: agent,
            "tcp=ECONNREFUSED udp=EPERM mcast=EPERM bcast=EPERM dns=ok outside=ok tcp6=ECONNREFUSED mdns=EPERM "
                + "udp6=EPERM ll6=EPERM mdns6=EPERM")
        #expect(held != nil, "not granted: \(agent.output.suffix(1500))")
        #expect(try lab.incoming() == "ECONNREFUSED", "an incoming connection from the peer is refused")
        let status = try daemon.control(["status"])
        #expect(
            status.stdout.contains("enforcement: registered (fail-open), 1 apps held back, 0 granted"), "\(status)")

        // The first blocked attempt is a pending request, the app's one however many packets it sends.
        var requests: [[String: Any]] = []
        let asked = waitUntil(timeout: 3) {
            requests = HeraldJSON.objects((try? daemon.control(["requests", "--json"]))?.stdout ?? "")
                .filter { $0["app"] as? String == EnforcementLab.appID }
            return !requests.isEmpty
        }
        #expect(asked.held, "the operator sees a pending request: \(daemon.log.suffix(800))")
        #expect(requests.count == 1 && requests.first?["operation"] as? String == "local-network", "\(requests)")
        let prompt = try daemon.control(["requests"])
        #expect(prompt.stdout.contains("the local network"), "\(prompt)")
        let shown = try daemon.control(["app", "show", EnforcementLab.appID])
        let blocked = shown.stdout.split(separator: "\n").first { $0.contains("blocked:") }
        let packets = blocked.flatMap { line in line.split(separator: " ").compactMap { Int($0) }.first } ?? 0
        #expect(packets > 0, "herald app show counts the held-back packets: \(shown)")
        let destinations = [
            lab.peerAddress, EnforcementLab.ssdpGroup, TestLAN.ipv4Prefix + "255", TestLAN.ipv6Prefix + "11",
            "224.0.0.251",
        ]
        #expect(
            destinations.contains { blocked?.hasSuffix("the latest to \($0)") == true },
            "herald app show names where the latest held-back packet went: \(shown)")

        // Granted: the same process reaches the peer over TCP and UDP, without a restart; multicast and broadcast
        // still need the entitlement.
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        let granted = try lab.waitForRound(
            of: agent,
            "tcp=ok udp=ok mcast=EPERM bcast=EPERM dns=ok outside=ok tcp6=ok mdns=EPERM udp6=ok ll6=ok mdns6=EPERM",
            timeout: 3)
        #expect(granted != nil, "granted: \(agent.stdout.suffix(600))")
        #expect(try lab.incoming() == "ok", "the peer connects to the granted app")
        let open = agent.stdout.count
        let connected = waitUntil(timeout: 3) { agent.stdout.dropFirst(open).contains("held ok") }
        #expect(connected.held, "the long-lived connection is up once granted: \(agent.stdout.suffix(400))")

        // The manifest gains the multicast entitlement: the decision stays, multicast and broadcast open.
        try lab.register(multicast: true)
        let entitled = try lab.waitForRound(
            of: agent, "tcp=ok udp=ok mcast=ok bcast=ok dns=ok outside=ok tcp6=ok mdns=sent udp6=ok ll6=ok mdns6=sent",
            timeout: 3)
        #expect(entitled != nil, "granted with the entitlement: \(agent.stdout.suffix(600))")

        // Denied: the established connection breaks within a second, and every LAN path fails again.
        let beforeDeny = agent.stdout.count
        let denied = Date()
        try daemon.control(["deny", EnforcementLab.appID]).expectSuccess()
        let broken = waitUntil(timeout: 3) { agent.stdout.dropFirst(beforeDeny).contains("held broken") }
        let delay = Date().timeIntervalSince(denied)
        #expect(broken.held && delay < 1.0, "the open connection stopped \(delay) s after deny")
        let cut = try lab.waitForRound(
            of: agent, "tcp=ECONNREFUSED udp=EPERM mcast=EPERM bcast=EPERM dns=ok outside=ok tcp6=ECONNREFUSED",
            after: beforeDeny)
        #expect(cut != nil, "denied: \(agent.stdout.suffix(600))")
        let cut6 = try lab.waitForRound(of: agent, "udp6=EPERM ll6=EPERM mdns6=EPERM", after: beforeDeny)
        #expect(cut6 != nil, "denied, IPv6: \(agent.stdout.suffix(600))")
        #expect(try lab.incoming() == "ECONNREFUSED", "an incoming connection to the denied app is refused")

        // Reset: not determined is not granted.
        let beforeRegrant = agent.stdout.count
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ok", after: beforeRegrant, timeout: 3) != nil)
        let beforeReset = agent.stdout.count
        try daemon.control(["reset", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM", after: beforeReset) != nil)
    }

    @Test("enforcement = all: every program but operators' is held back until its app is granted")
    func all() throws {
        let lab = try EnforcementLab(enforcement: "all")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        let app = try lab.startAgent()
        let stranger = try lab.startAgent(inAppCgroup: false)
        let blocked = "tcp=ECONNREFUSED udp=EPERM mcast=EPERM bcast=EPERM dns=ok outside=ok tcp6=ECONNREFUSED"
        #expect(try lab.waitForRound(of: app, blocked) != nil, "the app: \(app.output.suffix(600))")
        #expect(try lab.waitForRound(of: stranger, blocked) != nil, "no app: \(stranger.output.suffix(600))")
        // An operator's program (root here) is not held back.
        let root = try lab.host.run(
            ["python3", "-c", "import socket; socket.create_connection(('\(lab.peerAddress)', 7000), timeout=2)"])
        #expect(root.succeeded, "root reaches the peer: \(root)")
        let beforeGrant = app.stdout.count
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        // IPv6 too, whose neighbour discovery (the kernel's own packets) is never held back.
        #expect(try lab.waitForRound(of: app, "tcp=ok udp=ok mcast=EPERM", after: beforeGrant) != nil)
        #expect(try lab.waitForRound(of: app, "tcp6=ok", after: beforeGrant) != nil)
        let strangerAfter = stranger.stdout.count
        #expect(
            try lab.waitForRound(of: stranger, blocked, after: strangerAfter) != nil,
            "a program that is no app stays held back")

        // Receiving: the ingress program sits above the app's cgroup; once the app has the entitlement, it moves
        // below the app's parent, to the app's siblings, and the app hears the peer's NOTIFYs.
        _ = try lab.peer.spawn([
            "/usr/bin/python3", "-u", try lab.peer.writeFile(named: "ssdp.py", Self.ssdpResponder), lab.peerAddress,
            lab.peer.interface,
        ])
        let client = try lab.startInAppCgroup(
            script: Self.ssdpClient, named: "ssdp-client.py", arguments: [lab.hostAddress, lab.host.interface])
        #expect(try Self.steady(client, "msearch=EPERM notify4=0 notify6=0", after: 0), "\(client.output.suffix(600))")
        // A process of the root cgroup itself overhears nothing either (a program of its own, at the root); root's
        // own listener there, an operator's, hears the NOTIFYs meanwhile.
        let rootStranger = try lab.startWitness(
            port: 1900, group4: EnforcementLab.ssdpGroup, group6: "ff02::c", needle: "NOTIFY", inRootCgroup: true)
        let operatorWitness = try lab.startWitness(
            port: 1900, group4: EnforcementLab.ssdpGroup, group6: "ff02::c", needle: "NOTIFY", inRootCgroup: true,
            user: 0)
        let operatorHeard = waitUntil(timeout: 6) {
            operatorWitness.stdout.contains("heard4") && operatorWitness.stdout.contains("heard6")
        }
        #expect(operatorHeard.held, "root hears the peer's NOTIFYs: \(operatorWitness.output.suffix(400))")
        #expect(
            !rootStranger.stdout.contains("heard"), "the root cgroup's stranger overheard: \(rootStranger.output)")
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "in 'all', the program is attached above the app's cgroup")
        try lab.register(multicast: true)
        let entitled = client.stdout.count
        let open = waitUntil(timeout: 6) {
            Self.rounds(of: client, after: entitled).contains {
                $0["msearch"] == "ok" && $0["notify4"] != "0" && $0["notify6"] != "0"
            }
        }
        #expect(open.held, "with the entitlement, in 'all': \(client.output.suffix(600))")
    }

    @Test(
        "Least privilege: heraldd as its own user enforces with CAP_NET_ADMIN and CAP_BPF, and without either refuses to start"
    )
    func leastPrivilege() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let user = try TestUser.ensure(TestUser.daemonName)
        do {
            let daemon = try lab.startConfinedDaemon(user: user, capabilities: [])
            daemon.stop()
            Issue.record("heraldd started with enforcement on and no CAP_NET_ADMIN:\n\(daemon.log)")
        } catch {
            let message = "\(error)"
            #expect(message.contains("CAP_NET_ADMIN") && message.contains("heraldd-enforcement.conf"), "\(message)")
        }
        #expect(try lab.table() == nil, "nothing was loaded")
        // CAP_NET_ADMIN alone loads the table but not the ingress program: heraldd stops, and removes the table.
        do {
            let daemon = try lab.startConfinedDaemon(user: user, capabilities: ["net_admin"])
            daemon.stop()
            Issue.record("heraldd started with enforcement on and no CAP_BPF:\n\(daemon.log)")
        } catch {
            let message = "\(error)"
            #expect(message.contains("CAP_BPF") && message.contains("heraldd-enforcement.conf"), "\(message)")
        }
        #expect(try lab.table() == nil, "no table is left when the ingress program cannot be loaded")
        let daemon = try lab.startConfinedDaemon(user: user, capabilities: ["net_admin", "bpf"])
        let agent = try lab.startAgent()
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM") != nil, "\(daemon.log)")
        let beforeGrant = agent.stdout.count
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok", after: beforeGrant) != nil, "\(daemon.log)")
        #expect(try lab.ingressPrograms(becoming: 1) == 1, "the confined heraldd attached its ingress program")
        #expect(daemon.stop() == 0)
        #expect(try lab.table() == nil, "a clean stop removes the table")
    }

    @Test("enforcement = off changes nothing: no table, every path open to an app that is not granted")
    func off() throws {
        let lab = try EnforcementLab(enforcement: "off")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        let agent = try lab.startAgent()
        let open = try lab.waitForRound(
            of: agent, "tcp=ok udp=ok mcast=ok bcast=ok dns=ok outside=ok tcp6=ok mdns=sent udp6=ok ll6=ok mdns6=sent")
        #expect(open != nil, "off: \(agent.stdout.suffix(600))")
        #expect(try lab.table() == nil, "enforcement = off makes no table")
        #expect(try lab.incoming() == "ok")
        let status = try daemon.control(["status"])
        #expect(status.stdout.contains("enforcement: off"), "\(status)")
    }

    @Test("A clean stop removes the table; kill -9 and a restart leave exactly the rules the store implies")
    func stopKillRestart() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        var daemon = try lab.startDaemon()
        let agent = try lab.startAgent()
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED") != nil)
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok") != nil)
        let implied = try #require(try lab.table(), "the table exists while heraldd runs")
        #expect(implied.contains("org.example.kernelgate granted"), "\(implied)")
        // Granted without the multicast entitlement: its cgroup still has the ingress program.
        #expect(try lab.ingressPrograms(becoming: 1) == 1)

        // Clean stop (fail-open): no table, and the app reaches the LAN as without Herald.
        #expect(daemon.stop() == 0, "\(daemon.log)")
        #expect(try lab.table() == nil, "a clean stop leaves no table")
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "a clean stop detaches the ingress program")
        #expect(try lab.pinnedLinks() == [], "and removes its pins")
        let stopped = agent.stdout.count
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok mcast=ok bcast=ok", after: stopped) != nil)

        // Killed: the kernel keeps the rules; a stale rule added meanwhile is gone after the restart, which
        // rebuilds exactly what it built before from the same store.
        daemon = try lab.startDaemon()
        #expect(try lab.table() == implied)
        daemon.process.send(SIGKILL)
        _ = daemon.process.waitForExit(timeout: 5)
        #expect(try lab.table() == implied, "the kernel keeps the rules of a killed heraldd")
        #expect(try lab.ingressPrograms() == 1, "a killed heraldd's pinned link keeps the ingress program attached")
        #expect(try lab.pinnedLinks().count == 1)
        try lab.host.check(["nft", "add", "rule", "inet", "herald", "lan_out", "drop", "comment", "\"stale\""])
        #expect(try lab.table()?.contains("stale") == true)
        daemon = try lab.startDaemon()
        #expect(try lab.table() == implied, "a restart rebuilds exactly the rules of the store")
        #expect(try lab.ingressPrograms(becoming: 1) == 1, "a restart attaches the ingress program once")
        #expect(
            daemon.logShows("enforcement: replaced the 1 ingress links an earlier heraldd left pinned"), "\(daemon.log)"
        )
        #expect(try lab.pinnedLinks().count == 1, "the new link is pinned in place of the old one")
        let beforeDeny = agent.stdout.count
        try daemon.control(["deny", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM", after: beforeDeny) != nil)
        #expect(daemon.stop() == 0)
        #expect(try lab.table() == nil)
    }

    @Test(
        "fail-closed: a clean stop holds every app back, granted ones too, until heraldd runs again (a '*' selector)"
    )
    func failClosed() throws {
        let lab = try EnforcementLab(enforcement: "registered", failClosed: true, pattern: true)
        defer { lab.shutdown() }
        try lab.register(multicast: true)
        var daemon = try lab.startDaemon()
        let agent = try lab.startAgent()
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM") != nil, "held back by its pattern")
        let beforeGrant = agent.stdout.count
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok mcast=ok", after: beforeGrant) != nil)
        // Granted with the entitlement, the app hears the LAN's groups: no ingress program on its cgroup.
        #expect(try lab.ingressPrograms(becoming: 0) == 0)
        #expect(daemon.stop() == 0)
        let stopped = agent.stdout.count
        #expect(try lab.waitForRound(of: agent, "tcp=ECONNREFUSED udp=EPERM mcast=EPERM", after: stopped) != nil)
        // Receiving is held back too while heraldd is stopped: the program's link stays, pinned.
        #expect(try lab.ingressPrograms() == 1, "fail-closed leaves the ingress program on the app's cgroup")
        #expect(daemon.log.contains("the ingress program stays attached at 1 cgroups until heraldd runs"))
        daemon = try lab.startDaemon()
        let started = agent.stdout.count
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok mcast=ok", after: started) != nil)
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "running again, heraldd takes the program off")
        #expect(try lab.pinnedLinks() == [])
        _ = daemon
    }
}

/// A two-host LAN for the enforcement tests: h0 runs heraldd and the app (with the cgroup v2 hierarchy mounted in
/// its mount namespace), h1 is the peer, running a TCP echo server, a UDP echo (unicast and broadcast), an
/// SSDP-style multicast listener and a DNS-port echo, and routing an "outside" address that is not on the LAN.
final class EnforcementLab: @unchecked Sendable {
    static let appID = "org.example.kernelgate"
    static let outside = "203.0.113.7"
    static let ssdpGroup = "239.255.255.250"

    let lan: TestLAN
    let area: PermissionTestArea
    let host: TestLAN.Host
    let peer: TestLAN.Host
    let unit: String
    let cgroup: String
    private let configuration: String
    /// The mode heraldd is configured with.
    var enforcementMode: String
    private var createdSlice = false

    /// The manifest's selector: the unit's name, or with `pattern` a `*` pattern that matches it.
    let selector: String

    init(enforcement: String, failClosed: Bool = false, pattern: Bool = false) throws {
        guard Requirements.executable("nft") != nil else {
            throw HarnessError.setup("nft is missing: apt-get install nftables libnftables1")
        }
        lan = try TestLAN(hosts: 2)
        area = try PermissionTestArea()
        host = lan.hosts[0]
        peer = lan.hosts[1]
        unit = pattern ? "herald-kt\(lan.id)-4242.service" : "herald-kt\(lan.id).service"
        selector = pattern ? "herald-kt\(lan.id)-*.service" : unit
        cgroup = "/sys/fs/cgroup/system.slice/" + unit
        configuration = area.directory + "/heraldd.conf"
        enforcementMode = enforcement
        try "[permissions]\nenforcement = \(enforcement)\nfail-closed = \(failClosed ? "yes" : "no")\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        do {
            // The holder mounted this namespace's sysfs on /sys; the cgroup v2 hierarchy goes on top of it.
            try host.check(["mount", "-t", "cgroup2", "none", "/sys/fs/cgroup"])
            // A BPF file system of this namespace's own, where heraldd pins the ingress program's links.
            try host.check(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"])
            createdSlice = (try? host.run(["test", "-d", "/sys/fs/cgroup/system.slice"]))?.succeeded != true
            try host.check(["mkdir", "-p", cgroup])
            let peerScript = try peer.writeFile(named: "peer.py", Self.peerScript)
            let server = try peer.spawn(["python3", peerScript])
            try server.waitForOutput(containing: "listening", timeout: 10)
            try peer.check(["ip", "addr", "add", Self.outside + "/32", "dev", "lo"])
            try host.check(["ip", "route", "add", Self.outside + "/32", "via", peerAddress])
        } catch {
            shutdown()
            throw error
        }
    }

    /// The peer's LAN address.
    var peerAddress: String { TestLAN.ipv4Prefix + "11" }
    /// The app host's LAN address.
    var hostAddress: String { TestLAN.ipv4Prefix + "10" }

    func shutdown() {
        lan.shutdown(graceful: false)
        // The hierarchy is the machine's: the app's cgroup (empty once its processes are gone) goes away.
        // Here it is mounted at /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid).
        for root in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        where FileManager.default.fileExists(
            atPath: root + "/system.slice/" + unit)
        {
            let removed = waitUntil(timeout: 5) { rmdir(root + "/system.slice/" + unit) == 0 || errno == ENOENT }
            if !removed.held { print("cannot remove the cgroup \(root)/system.slice/\(unit): errno \(errno)") }
            if createdSlice { _ = rmdir(root + "/system.slice") }
        }
        area.remove()
    }

    /// Registers (or updates) the app's manifest: its unit as the only selector.
    func register(multicast: Bool) throws {
        var fields: [String: Any] = [
            "id": Self.appID, "name": "Kernel Gate", "systemdUnits": [selector],
            "NSBonjourServices": ["_kernelgate._tcp"],
            "NSLocalNetworkUsageDescription": "Kernel Gate talks to devices on your local network.",
        ]
        if multicast { fields["entitlements"] = ["com.apple.developer.networking.multicast"] }
        try FileManager.default.createDirectory(atPath: area.directory + "/apps", withIntermediateDirectories: true)
        let path = try area.writeManifest(fields, named: "apps/kernelgate.json")
        if let daemon = running, daemon.process.isRunning {
            try daemon.control(["app", "add", path]).expectSuccess()
        }
    }

    private var running: HeraldDaemon?

    /// Starts heraldd in h0 with the lab's configuration, store and apps directory (kept across restarts), run
    /// through `launcher` when one is given.
    func startDaemon(launcher: [String] = []) throws -> HeraldDaemon {
        let daemon = try host.startPermissionDaemon(
            area: area, arguments: ["--config", configuration, "--apps-dir", area.directory + "/apps"],
            launcher: launcher)
        running = daemon
        try waitForRules(of: daemon)
        return daemon
    }

    /// Waits until `daemon` has loaded its rules (its sockets accept before that, and it serves nobody until then).
    private func waitForRules(of daemon: HeraldDaemon) throws {
        guard enforcementMode != "off" else { return }
        guard daemon.logShows("enforcement: \(enforcementMode),") else {
            throw HarnessError.setup("heraldd did not load its rules:\n\(daemon.log)")
        }
    }

    /// Starts heraldd in h0 as `heraldd.service` runs it, as its own user with no capability but CAP_SYS_PTRACE and
    /// `capabilities` (`net_admin`, as the enforcement drop-in adds), with its store and sockets in the area.
    func startConfinedDaemon(user: TestUser, capabilities: [String]) throws -> HeraldDaemon {
        let run = area.directory + "/run"
        let state = area.directory + "/confined-state"
        for (path, mode) in [(run, 0o755), (state, 0o700)] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, mode_t(mode))
            chown(path, user.uid, user.gid)
        }
        let caps = (["sys_ptrace"] + capabilities).map { "+" + $0 }.joined(separator: ",")
        let launcher = [
            try Requirements.requireExecutable("setpriv"), "--reuid=\(user.uid)", "--regid=\(user.gid)",
            "--clear-groups", "--inh-caps=-all,\(caps)", "--ambient-caps=-all,\(caps)", "--bounding-set=-all,\(caps)",
            "--no-new-privs", "--",
        ]
        let daemon = try host.startHeraldd(
            arguments: [
                "--config", configuration, "--apps-dir", area.directory + "/apps", "--socket", run + "/dnssd.sock",
                "--control-socket", run + "/control.sock", "--state-dir", state,
            ],
            launcher: launcher)
        running = daemon
        try waitForRules(of: daemon)
        return daemon
    }

    /// Starts the app: the probe script, placed in the unit's cgroup (else left in the test's own, as a program
    /// that is no app), then run as the unprivileged app user.
    func startAgent(inAppCgroup: Bool = true) throws -> RunningProcess {
        // In the area, which the app user can read (the LAN's own directories are root's).
        let script = area.directory + "/agent.py"
        try Self.agentScript.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        // The system's interpreter: the app user must be able to read its library.
        let python = "/usr/bin/python3"
        let app = try AppUser.command([
            python, "-u", script, peerAddress, Self.outside, hostAddress, TestLAN.ipv6Prefix + "11",
            try peerLinkLocal() + "%" + host.interface, host.interface,
        ])
        let command = "exec " + app.map { "'\($0)'" }.joined(separator: " ")
        let line = inAppCgroup ? "echo $$ > \(cgroup)/cgroup.procs && " + command : command
        return try host.spawn(["sh", "-c", line])
    }

    /// The peer's IPv6 link-local address, once the kernel has finished checking it is unique.
    func peerLinkLocal() throws -> String {
        var address: String?
        waitUntil(timeout: 5) {
            let shown = try? peer.run(["ip", "-6", "-o", "addr", "show", "dev", peer.interface, "scope", "link"])
            address = shown.flatMap { result in
                result.stdout.split(separator: "\n").first { !$0.contains("tentative") }
                    .flatMap { line in line.split(separator: " ").first { $0.hasPrefix("fe80:") } }
                    .map { String($0.split(separator: "/")[0]) }
            }
            return address != nil
        }
        guard let address else { throw HarnessError.setup("the peer has no IPv6 link-local address") }
        return address
    }

    /// A TCP connection from the peer to the app's listening port: "ok" or the error's name.
    func incoming() throws -> String {
        let script = """
            import errno, socket
            try:
                s = socket.create_connection(("\(hostAddress)", 7100), timeout=1); d = s.recv(8)
                print("ok" if d == b"app" else "bad")
            except socket.timeout: print("timeout")
            except OSError as e: print(errno.errorcode.get(e.errno, str(e.errno)))
            """
        let result = try peer.run(["python3", "-c", script], timeout: 10)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `nft --stateless list table inet herald` in h0, without what the packets put in it (counters, the sets of
    /// held-back destinations), or nil when there is no such table.
    func table() throws -> String? {
        let result = try host.run(["nft", "--stateless", "list", "table", "inet", "herald"])
        guard result.succeeded else { return nil }
        var lines: [Substring] = []
        var inHeldSet = false
        var skipping = false
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("set held") { inHeldSet = true }
            if trimmed == "}" && !skipping { inHeldSet = false }
            if inHeldSet && trimmed.hasPrefix("elements = {") { skipping = true }
            if !skipping { lines.append(line) }
            if skipping && trimmed.hasSuffix("}") { skipping = false }
        }
        return lines.joined(separator: "\n")
    }

    /// Waits for a round of the agent, printed after `offset` characters of its output, whose results contain
    /// `expected`; returns the line.
    func waitForRound(of agent: RunningProcess, _ expected: String, after offset: Int = 0, timeout: TimeInterval = 5)
        throws -> String?
    {
        var found: String?
        waitUntil(timeout: timeout) {
            let text = agent.stdout.dropFirst(offset)
            found = text.split(separator: "\n").dropLast(text.hasSuffix("\n") ? 0 : 1)
                .last { $0.hasPrefix("round ") && $0.contains(expected) }.map(String.init)
            return found != nil
        }
        if let found { print("enforcement: the app's round: \(found)") }
        return found
    }

    /// The peer: echoes on TCP 7000 (LAN and outside address), UDP 7001 (unicast and broadcast, IPv4 and IPv6) and UDP 53 (the
    /// LAN's DNS port), and answers datagrams to the SSDP group on 1900 by unicast.
    static let peerScript = """
        import socket, struct, threading
        def tcp(family=socket.AF_INET, address="0.0.0.0"):
            s = socket.socket(family); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((address, 7000)); s.listen(64)
            while True:
                c, _ = s.accept()
                threading.Thread(target=echo, args=(c,), daemon=True).start()
        def echo(c):
            try:
                while True:
                    d = c.recv(64)
                    if not d: break
                    c.sendall(d)
            except OSError: pass
            c.close()
        def udp(port, group=None, family=socket.AF_INET):
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
            if group:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                             struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton("0.0.0.0")))
            while True:
                d, a = s.recvfrom(64)
                s.sendto(d, a)
        threading.Thread(target=tcp, daemon=True).start()
        threading.Thread(target=tcp, args=(socket.AF_INET6, "::"), daemon=True).start()
        threading.Thread(target=udp, args=(7001,), daemon=True).start()
        threading.Thread(target=udp, args=(7001, None, socket.AF_INET6), daemon=True).start()
        threading.Thread(target=udp, args=(53,), daemon=True).start()
        threading.Thread(target=udp, args=(1900, "\(ssdpGroup)"), daemon=True).start()
        print("listening", flush=True)
        threading.Event().wait()
        """

    /// The app: every 0.2 s a round of probes (TCP to the peer, UDP unicast, SSDP multicast, subnet broadcast, the
    /// peer's DNS port, TCP to the outside address, TCP over IPv6, a query to the mDNS group, UDP to the peer's ULA
    /// and link-local addresses, a query to the IPv6 mDNS group), each printed as ok or the error's name; meanwhile a
    /// long-lived TCP connection to the peer pings every 0.1 s and says whether it still works.
    static let agentScript = """
        import errno, socket, sys, threading, time
        peer, outside, own, peer6, link6, ifname = sys.argv[1:7]
        def name(e):
            if isinstance(e, socket.timeout): return "timeout"
            if isinstance(e, OSError) and e.errno: return errno.errorcode.get(e.errno, str(e.errno))
            return type(e).__name__
        def tcp(host):
            try:
                s = socket.create_connection((host, 7000), timeout=1)
                s.sendall(b"hi"); d = s.recv(16); s.close()
                return "ok" if d == b"hi" else "bad"
            except Exception as e: return name(e)
        def udp(host, port):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(own))
            try:
                s.sendto(b"hi", (host, port)); d, _ = s.recvfrom(64)
                return "ok" if d == b"hi" else "bad"
            except Exception as e: return name(e)
            finally: s.close()
        def udp6(host, port):
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.settimeout(0.5)
            try:
                s.sendto(b"hi", socket.getaddrinfo(host, port, socket.AF_INET6, socket.SOCK_DGRAM)[0][4])
                d, _ = s.recvfrom(64)
                return "ok" if d == b"hi" else "bad"
            except Exception as e: return name(e)
            finally: s.close()
        def mdns6():
            # The same query to the IPv6 mDNS group on the LAN's link.
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex(ifname))
            query = bytes(4) + b"\\x00\\x01" + bytes(6)
            query += b"\\x09_services\\x07_dns-sd\\x04_udp\\x05local\\x00\\x00\\x0c\\x00\\x01"
            try:
                s.sendto(query, ("ff02::fb", 5353, 0, socket.if_nametoindex(ifname))); return "sent"
            except Exception as e: return name(e)
            finally: s.close()
        def mdns():
            # A query of its own to the mDNS group: only whether the kernel lets it out.
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(own))
            query = bytes(4) + b"\\x00\\x01" + bytes(6)
            query += b"\\x09_services\\x07_dns-sd\\x04_udp\\x05local\\x00\\x00\\x0c\\x00\\x01"
            try:
                s.sendto(query, ("224.0.0.251", 5353)); return "sent"
            except Exception as e: return name(e)
            finally: s.close()
        def held():
            s = None
            while True:
                try:
                    if s is None: s = socket.create_connection((peer, 7000), timeout=1); s.settimeout(1)
                    s.sendall(b"ping"); d = s.recv(16)
                    if not d: raise ConnectionResetError(errno.ECONNRESET, "closed")
                    print("held ok", flush=True)
                except Exception as e:
                    print("held broken " + name(e), flush=True)
                    if s: s.close()
                    s = None
                time.sleep(0.1)
        def listen():
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", 7100)); s.listen(16)
            while True:
                c, _ = s.accept(); c.sendall(b"app"); c.close()
        threading.Thread(target=held, daemon=True).start()
        threading.Thread(target=listen, daemon=True).start()
        n = 0
        bcast = peer.rsplit(".", 1)[0] + ".255"
        while True:
            n += 1
            print("round %d tcp=%s udp=%s mcast=%s bcast=%s dns=%s outside=%s tcp6=%s mdns=%s udp6=%s ll6=%s mdns6=%s"
                  % (n, tcp(peer), udp(peer, 7001), udp("\(ssdpGroup)", 1900), udp(bcast, 7001), udp(peer, 53),
                     tcp(outside), tcp(peer6), mdns(), udp6(peer6, 7001), udp6(link6, 7001), mdns6()), flush=True)
            time.sleep(0.2)
        """
}
