import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Incoming multicast and broadcast (docs/enforcement.md, "Incoming multicast and broadcast"): the app's own
/// python-zeroconf browser and an SSDP client, on the namespaced LAN of ``EnforcementLab``, overhear nothing of the
/// peer until the app is granted with the multicast entitlement; and `enforcement = off` after a crash.
extension KernelEnforcementTests {
    @Test("The app's own python-zeroconf finds nothing of the peer until granted, then finds it without a restart")
    func ownZeroconf() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: true)
        let daemon = try lab.startDaemon()
        let peer = try lab.peer.spawn(
            [
                "/usr/bin/python3", "-u", try lab.peer.writeFile(named: "announce.py", Self.zeroconfPeer),
                lab.peerAddress,
            ])
        try peer.waitForOutput(containing: "registered", timeout: 15)
        // heraldd has read the manifest and attached the program before the browser starts.
        #expect(try lab.ingressPrograms(becoming: 1) == 1, "\(daemon.log)")
        let browser = try lab.startInAppCgroup(
            script: Self.zeroconfBrowser, named: "browse.py", arguments: [lab.hostAddress])
        try browser.waitForOutput(containing: "browsing", timeout: 15)
        // A listener of another user, outside the app's cgroup, hears the peer's announcements meanwhile.
        let witness = try lab.startWitness(port: 5353, group4: "224.0.0.251", group6: "ff02::fb", needle: "Peer Gate")
        let heard = waitUntil(timeout: 6) { witness.stdout.contains("heard4") }
        #expect(heard.held, "the peer's announcements reach the host: \(witness.output.suffix(400))")
        // The peer announces every second: six of them pass by the app's own browser.
        Thread.sleep(forTimeInterval: 6)
        #expect(!browser.stdout.contains("Peer Gate"), "not granted, the app overheard: \(browser.stdout)")
        // heraldd, in a cgroup of its own, keeps hearing the LAN: root browsing through it finds the peer.
        let through = try daemon.spawnHerald(["browse", "_kernelgate._tcp"])
        defer { through.terminate(grace: 1) }
        let listed = waitUntil(timeout: 5) { through.stdout.contains("Peer Gate") }
        #expect(listed.held, "heraldd finds the peer: \(through.output.suffix(400))")
        let status = try daemon.control(["status"])
        #expect(status.stdout.contains("incoming multicast and broadcast held back at 1 cgroups"), "\(status)")

        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        let found = waitUntil(timeout: 8) { browser.stdout.contains("Added Peer Gate._kernelgate._tcp.local.") }
        #expect(
            found.held, "granted with the entitlement, the same browser finds the peer: \(browser.output.suffix(800))")
        let after = try daemon.control(["status"])
        #expect(after.stdout.contains("incoming multicast and broadcast held back at 0 cgroups"), "\(after)")
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "a granted app with the entitlement has no ingress program")
    }

    @Test("SSDP: an app granted for Bonjour types only neither sends M-SEARCH nor overhears NOTIFY, IPv4 and IPv6")
    func ssdp() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        _ = try lab.peer.spawn([
            "/usr/bin/python3", "-u", try lab.peer.writeFile(named: "ssdp.py", Self.ssdpResponder), lab.peerAddress,
            lab.peer.interface,
        ])
        let client = try lab.startInAppCgroup(
            script: Self.ssdpClient, named: "ssdp-client.py", arguments: [lab.hostAddress, lab.host.interface])
        let witness = try lab.startWitness(
            port: 1900, group4: EnforcementLab.ssdpGroup, group6: "ff02::c", needle: "NOTIFY")
        let heard = waitUntil(timeout: 6) { witness.stdout.contains("heard4") && witness.stdout.contains("heard6") }
        #expect(heard.held, "the peer's NOTIFYs reach the host over both families: \(witness.output.suffix(400))")

        let blocked = "msearch=EPERM notify4=0 notify6=0"
        #expect(try Self.steady(client, blocked, after: 0), "not granted: \(client.output.suffix(800))")

        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        let granted = client.stdout.count
        #expect(
            try Self.steady(client, blocked, after: granted), "granted, no entitlement: \(client.output.suffix(800))")

        // The entitlement opens both directions: the responder's answer, and its NOTIFYs over IPv4 and IPv6.
        try lab.register(multicast: true)
        let entitled = client.stdout.count
        let open = waitUntil(timeout: 6) {
            Self.rounds(of: client, after: entitled).contains {
                $0["msearch"] == "ok" && ($0["notify4"].flatMap { Int($0) } ?? 0) > 0
                    && ($0["notify6"].flatMap { Int($0) } ?? 0) > 0
            }
        }
        #expect(open.held, "with the entitlement: \(client.output.suffix(800))")

        try daemon.control(["deny", EnforcementLab.appID]).expectSuccess()
        let denied = client.stdout.count
        #expect(try Self.steady(client, blocked, after: denied), "denied: \(client.output.suffix(800))")
        #expect(try lab.ingressPrograms(becoming: 1) == 1, "denied: the program is attached again")

        // Granted again, then reset (not determined): detached, then attached again.
        try daemon.control(["grant", EnforcementLab.appID]).expectSuccess()
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "granted with the entitlement: detached")
        try daemon.control(["reset", EnforcementLab.appID]).expectSuccess()
        let reset = client.stdout.count
        #expect(try lab.ingressPrograms(becoming: 1) == 1, "reset: attached again")
        #expect(try Self.steady(client, blocked, after: reset), "reset: \(client.output.suffix(800))")
    }

    @Test("enforcement = off after a crash: the table a killed heraldd left goes, with one line in the log")
    func offAfterCrash() throws {
        let lab = try EnforcementLab(enforcement: "registered")
        defer { lab.shutdown() }
        try lab.register(multicast: false)
        let daemon = try lab.startDaemon()
        #expect(try lab.table() != nil)
        let attached = try lab.ingressPrograms(becoming: 1)
        #expect(attached == 1, "\(daemon.log)")
        daemon.process.send(SIGKILL)
        _ = daemon.process.waitForExit(timeout: 5)
        #expect(try lab.table() != nil, "the kernel keeps a killed heraldd's table")

        try lab.configure(enforcement: "off")
        let off = try lab.startDaemon()
        let line = "enforcement: off: removed the table inet herald an earlier heraldd left"
        #expect(off.logShows(line), "\(off.log)")
        #expect(try lab.table() == nil, "the table is gone")
        #expect(try lab.ingressPrograms(becoming: 0) == 0, "no ingress program is left")
        #expect(off.log.contains("enforcement: off: detached the 1 ingress links an earlier heraldd left pinned"))
        #expect(try lab.pinnedLinks() == [])
        let agent = try lab.startAgent()
        #expect(try lab.waitForRound(of: agent, "tcp=ok udp=ok mcast=ok bcast=ok") != nil, "off: every path is open")
        // Said once; a second start finds nothing to remove and says nothing.
        #expect(off.stop() == 0)
        let again = try lab.startDaemon()
        _ = try again.control(["status"])
        #expect(!again.log.contains("removed the table"), "\(again.log)")
        #expect(off.log.components(separatedBy: line).count == 2, "one line: \(off.log)")
        #expect(again.stop() == 0)

        // heraldd as its own user: killed with a table loaded, then started with 'off' and without CAP_NET_ADMIN
        // (the drop-in removed with the switch), it cannot remove the table and says how to.
        try lab.configure(enforcement: "registered")
        let user = try TestUser.ensure(TestUser.daemonName)
        let confined = try lab.startConfinedDaemon(user: user, capabilities: ["net_admin", "bpf"])
        confined.process.send(SIGKILL)
        _ = confined.process.waitForExit(timeout: 5)
        #expect(try lab.table() != nil)
        try lab.configure(enforcement: "off")
        let bare = try lab.startConfinedDaemon(user: user, capabilities: [])
        #expect(bare.logShows("remove it with 'nft delete table inet herald'"), "\(bare.log)")
        #expect(try lab.table() != nil, "without CAP_NET_ADMIN the table stays")
        #expect(bare.stop() == 0)
        let able = try lab.startConfinedDaemon(user: user, capabilities: ["net_admin"])
        #expect(able.logShows(line), "with CAP_NET_ADMIN back, it goes: \(able.log)")
        #expect(try lab.table() == nil)
    }

    /// Waits for a round after `offset` that shows `expected`, then checks that the next three show it too.
    static func steady(_ agent: RunningProcess, _ expected: String, after offset: Int) throws -> Bool {
        let first = waitUntil(timeout: 6) { rounds(of: agent, after: offset).contains { matches($0, expected) } }
        guard first.held else { return false }
        let start = rounds(of: agent, after: offset).lastIndex { matches($0, expected) } ?? 0
        let next = waitUntil(timeout: 6) { rounds(of: agent, after: offset).count >= start + 4 }
        guard next.held else { return false }
        let following = rounds(of: agent, after: offset)[(start + 1)...(start + 3)]
        if let bad = following.first(where: { !matches($0, expected) }) { print("ssdp: unexpected round \(bad)") }
        return following.allSatisfy { matches($0, expected) }
    }

    /// The complete `round N key=value …` lines after `offset`, as dictionaries.
    static func rounds(of agent: RunningProcess, after offset: Int) -> [[String: String]] {
        let text = agent.stdout.dropFirst(offset)
        let lines = text.split(separator: "\n").dropLast(text.hasSuffix("\n") ? 0 : 1).filter { $0.hasPrefix("round ") }
        // The first line after an offset may be cut; only whole rounds count.
        return lines.dropFirst(offset == 0 ? 0 : 1).map { line in
            var fields: [String: String] = [:]
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            return fields
        }
    }

    static func matches(_ round: [String: String], _ expected: String) -> Bool {
        expected.split(separator: " ").allSatisfy { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return round[String(parts[0])] == String(parts[1])
        }
    }

    /// The peer's python-zeroconf: registers "Peer Gate" (`_kernelgate._tcp`) and announces it again every second
    /// (a new TXT record each time), so that anyone listening on the LAN hears it.
    static let zeroconfPeer = """
        import socket, sys, time
        from zeroconf import IPVersion, ServiceInfo, Zeroconf
        own = sys.argv[1]
        zc = Zeroconf(interfaces=[own], ip_version=IPVersion.V4Only)
        def info(n):
            return ServiceInfo("_kernelgate._tcp.local.", "Peer Gate._kernelgate._tcp.local.",
                               addresses=[socket.inet_aton(own)], port=7000, properties={"n": str(n)},
                               server="peer-gate.local.")
        zc.register_service(info(0))
        print("registered", flush=True)
        n = 0
        while True:
            time.sleep(1); n += 1
            zc.update_service(info(n))
        """

    /// The app's own python-zeroconf browser for `_kernelgate._tcp`, printing each change it sees.
    static let zeroconfBrowser = """
        import sys, time
        from zeroconf import IPVersion, ServiceBrowser, Zeroconf
        zc = Zeroconf(interfaces=[sys.argv[1]], ip_version=IPVersion.V4Only)
        def changed(zeroconf, service_type, name, state_change):
            print("%s %s" % (state_change.name, name), flush=True)
        browser = ServiceBrowser(zc, "_kernelgate._tcp.local.", handlers=[changed])
        print("browsing", flush=True)
        while True:
            time.sleep(1)
        """

    /// The peer's SSDP device: answers M-SEARCH to 239.255.255.250:1900 by unicast, and sends NOTIFY to
    /// 239.255.255.250 and ff02::c every 0.3 s.
    static let ssdpResponder = """
        import socket, struct, sys, threading, time
        own, ifname = sys.argv[1], sys.argv[2]
        group, index = "239.255.255.250", socket.if_nametoindex(ifname)
        def answer():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", 1900))
            s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                         struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton(own)))
            while True:
                d, a = s.recvfrom(2048)
                if d.startswith(b"M-SEARCH"):
                    s.sendto(b"HTTP/1.1 200 OK\\r\\nST: urn:herald-test:device:1\\r\\nUSN: uuid:peer\\r\\n\\r\\n", a)
        threading.Thread(target=answer, daemon=True).start()
        s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(own))
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
        notify = b"NOTIFY * HTTP/1.1\\r\\nNT: urn:herald-test:device:1\\r\\nNTS: ssdp:alive\\r\\nUSN: uuid:peer\\r\\n\\r\\n"
        while True:
            for s, to in ((s4, (group, 1900)), (s6, ("ff02::c", 1900, 0, index))):
                try: s.sendto(notify, to)
                except OSError as e: print("notify:", e, flush=True)
            time.sleep(0.3)
        """

    /// A listener on a port and its IPv4 and IPv6 groups that prints `heard4` or `heard6` for each datagram that
    /// holds a given text: arguments own address, interface, port, IPv4 group, IPv6 group, text.
    static let witnessScript = """
        import socket, struct, sys, threading
        own, ifname, port, group4, group6, needle = sys.argv[1:7]
        port, needle, index = int(port), needle.encode(), socket.if_nametoindex(ifname)
        def listen(family):
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET:
                s.bind(("0.0.0.0", port))
                s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                             struct.pack("4s4s", socket.inet_aton(group4), socket.inet_aton(own)))
            else:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind(("::", port))
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                             socket.inet_pton(socket.AF_INET6, group6) + struct.pack("@I", index))
            while True:
                d, _ = s.recvfrom(9000)
                if needle in d: print("heard" + ("4" if family == socket.AF_INET else "6"), flush=True)
        for family in (socket.AF_INET, socket.AF_INET6):
            threading.Thread(target=listen, args=(family,), daemon=True).start()
        threading.Event().wait()
        """

    /// An SSDP client: listens for NOTIFY on 239.255.255.250 and ff02::c, and every 0.5 s sends an M-SEARCH and
    /// waits for an answer; prints `round N msearch=ok|ERROR notify4=COUNT notify6=COUNT` (the NOTIFYs heard in
    /// that round).
    static let ssdpClient = """
        import errno, socket, struct, sys, threading, time
        own, ifname = sys.argv[1], sys.argv[2]
        group, index = "239.255.255.250", socket.if_nametoindex(ifname)
        heard = {"4": 0, "6": 0}
        def listen(family):
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET:
                s.bind(("0.0.0.0", 1900))
                s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                             struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton(own)))
                key = "4"
            else:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind(("::", 1900))
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                             socket.inet_pton(socket.AF_INET6, "ff02::c") + struct.pack("@I", index))
                key = "6"
            while True:
                d, _ = s.recvfrom(2048)
                if d.startswith(b"NOTIFY"): heard[key] += 1
        for family in (socket.AF_INET, socket.AF_INET6):
            threading.Thread(target=listen, args=(family,), daemon=True).start()
        def msearch():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(own))
            try:
                s.sendto(b"M-SEARCH * HTTP/1.1\\r\\nHOST: 239.255.255.250:1900\\r\\nMAN: \\"ssdp:discover\\"\\r\\n"
                         b"MX: 1\\r\\nST: ssdp:all\\r\\n\\r\\n", (group, 1900))
                while True:
                    d, _ = s.recvfrom(2048)
                    if d.startswith(b"HTTP/1.1 200 OK"): return "ok"
            except socket.timeout: return "timeout"
            except OSError as e: return errno.errorcode.get(e.errno, str(e.errno))
            finally: s.close()
        n = 0
        while True:
            n += 1
            for key in heard: heard[key] = 0
            result = msearch()
            time.sleep(0.5)
            print("round %d msearch=%s notify4=%d notify6=%d" % (n, result, heard["4"], heard["6"]), flush=True)
        """
}

extension EnforcementLab {
    /// Rewrites the configuration with another enforcement mode, for the next start.
    func configure(enforcement mode: String) throws {
        try "[permissions]\nenforcement = \(mode)\nfail-closed = no\n"
            .write(toFile: area.directory + "/heraldd.conf", atomically: true, encoding: .utf8)
        enforcementMode = mode
    }

    /// Runs `script` with the system's python3 as the app user, in the app's cgroup.
    func startInAppCgroup(script: String, named name: String, arguments: [String]) throws -> RunningProcess {
        let path = area.directory + "/" + name
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let app = try AppUser.command(["/usr/bin/python3", "-u", path] + arguments)
        let command = "exec " + app.map { "'\($0)'" }.joined(separator: " ")
        return try host.spawn(["sh", "-c", "echo $$ > \(cgroup)/cgroup.procs && " + command])
    }

    /// A listener of `user` (by default one that is no app's), outside the app's cgroup (with `inRootCgroup`, in
    /// the root cgroup itself), on `port` and its groups: it shows whether the peer's multicast (datagrams holding
    /// `needle`) reaches the host.
    func startWitness(
        port: Int, group4: String, group6: String, needle: String, inRootCgroup: Bool = false, user: UInt32 = 4242
    ) throws -> RunningProcess {
        let path = area.directory + "/witness.py"
        try KernelEnforcementTests.witnessScript.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let setpriv = try Requirements.requireExecutable("setpriv")
        let command = [
            setpriv, "--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--", "/usr/bin/python3", "-u", path,
            hostAddress, host.interface, "\(port)", group4, group6, needle,
        ]
        guard inRootCgroup else { return try host.spawn(command) }
        let line = "echo $$ > /sys/fs/cgroup/cgroup.procs && exec " + command.map { "'\($0)'" }.joined(separator: " ")
        return try host.spawn(["sh", "-c", line])
    }

    /// The names of the links heraldd pinned in h0's BPF file system.
    func pinnedLinks() throws -> [String] {
        let result = try host.run(["ls", "-1", "/sys/fs/bpf/herald"])
        return result.succeeded ? result.stdout.split(separator: "\n").map(String.init) : []
    }

    /// How many ingress programs are attached to the app's cgroup itself, once that is `expected` or after 3 s
    /// (heraldd reads the apps' manifests, and a killed one's links are released, a moment later).
    func ingressPrograms(becoming expected: Int) throws -> Int {
        var count = try ingressPrograms()
        waitUntil(timeout: 3) {
            count = (try? ingressPrograms()) ?? count
            return count == expected
        }
        return count
    }

    /// How many ingress programs are attached to the app's cgroup itself (BPF_PROG_QUERY, through python's ctypes).
    func ingressPrograms() throws -> Int {
        let script = """
            import ctypes, os, platform, struct, sys
            number = {"x86_64": 321, "aarch64": 280}[platform.machine()]
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
            ids = (ctypes.c_uint32 * 64)()
            attr = ctypes.create_string_buffer(128)
            # target_fd, attach_type (BPF_CGROUP_INET_INGRESS), query_flags, attach_flags, prog_ids, prog_cnt
            struct.pack_into("=IIIIQI", attr, 0, fd, 0, 0, 0, ctypes.addressof(ids), 64)
            if libc.syscall(number, 16, attr, 128) != 0:  # BPF_PROG_QUERY
                sys.exit("BPF_PROG_QUERY: " + os.strerror(ctypes.get_errno()))
            count = struct.unpack_from("=I", attr, 24)[0]
            print(count, " ".join(str(ids[i]) for i in range(min(count, 64))))
            """
        let result = try host.run(["/usr/bin/python3", "-c", script, cgroup])
        let fields = result.stdout.split(whereSeparator: \.isWhitespace)
        guard result.succeeded, let count = fields.first.flatMap({ Int($0) }) else {
            throw HarnessError.setup("cannot query the cgroup's programs: \(result)")
        }
        print("enforcement: ingress programs of \(cgroup): \(fields.dropFirst().joined(separator: " "))")
        return count
    }
}
