import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Proves the TestLAN harness with real peers only (Avahi, python-zeroconf,
/// plain sockets, dig); Herald is not involved. Everything runs inside network
/// namespaces the harness creates and deletes.
@Suite(
    "TestLAN harness with real peers",
    .serialized,
    .enabled(if: Requirements.isRoot, Requirements.notRootReason)
)
struct TestLANTests {
    init() throws {
        try Requirements.check()
    }

    // (a)
    @Test("two hosts exchange IPv4 and IPv6 multicast on the mDNS groups")
    func multicastExchange() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (a, b) = (lan.hosts[0], lan.hosts[1])

        let toA = try a.spawnPython(
            script: PeerScripts.multicastExchange, arguments: ["A-\(lan.id)", "B-\(lan.id)", a.interface, a.ipv4])
        let toB = try b.spawnPython(
            script: PeerScripts.multicastExchange, arguments: ["B-\(lan.id)", "A-\(lan.id)", b.interface, b.ipv4])
        let resultA = toA.result(timeout: 15)
        let resultB = toB.result(timeout: 15)

        #expect(resultA.succeeded, "host A: \(resultA)")
        #expect(resultB.succeeded, "host B: \(resultB)")
        #expect(resultA.stdout.contains("got4 B-\(lan.id) from \(b.ipv4)\n"), "\(resultA)")
        #expect(resultA.stdout.contains("got6 B-\(lan.id) from \(b.linkLocal)\n"), "\(resultA)")
        #expect(resultB.stdout.contains("got4 A-\(lan.id) from \(a.ipv4)\n"), "\(resultB)")
        #expect(resultB.stdout.contains("got6 A-\(lan.id) from \(a.linkLocal)\n"), "\(resultB)")
    }

    // (a, continued) the "two interfaces on one link" setup that later tests need.
    @Test("a second interface on the same link has its addresses and carries multicast")
    func secondInterface() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (a, b) = (lan.hosts[0], lan.hosts[1])
        let second = try a.addInterface()

        #expect(a.interfaces.count == 2)
        #expect(second.name != a.interface)
        #expect(second.ipv4 != a.ipv4 && second.ipv6 != a.ipv6)
        #expect(second.linkLocal.hasPrefix("fe80::"))
        let addresses = try a.check(["ip", "-o", "address", "show", "dev", second.name]).stdout
        #expect(addresses.contains(" \(second.ipv4)/24 "), "\(addresses)")
        #expect(addresses.contains(" \(second.ipv6)/64 "), "\(addresses)")
        let ports = try Command.check(["ip", "-n", lan.bridgeNamespace, "-o", "link", "show", "master", lan.bridgeName])
            .stdout
        #expect(ports.split(separator: "\n").count == 3, "\(ports)")

        let fromSecond = try a.spawnPython(
            script: PeerScripts.multicastExchange, arguments: ["A2-\(lan.id)", "B-\(lan.id)", second.name, second.ipv4])
        let toB = try b.spawnPython(
            script: PeerScripts.multicastExchange, arguments: ["B-\(lan.id)", "A2-\(lan.id)", b.interface, b.ipv4])
        let resultA = fromSecond.result(timeout: 15)
        let resultB = toB.result(timeout: 15)
        #expect(resultA.succeeded, "host A (second interface): \(resultA)")
        #expect(resultB.stdout.contains("got4 A2-\(lan.id) from \(second.ipv4)\n"), "\(resultB)")
        #expect(resultB.stdout.contains("got6 A2-\(lan.id) from \(second.linkLocal)\n"), "\(resultB)")
    }

    // (b)
    @Test("avahi-publish on one host is browsed and resolved by avahi-browse on another")
    func avahiToAvahi() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (a, b) = (lan.hosts[0], lan.hosts[1])
        let avahiA = try lan.startAvahi(on: [a, b])[0]

        let publisher = try a.spawn(["avahi-publish", "-s", "Harness Test", "_harness._tcp", "4242", "key=value"])
        try publisher.waitForOutput(containing: "Established under name 'Harness Test'", timeout: 10)

        // Found over both transports. avahi-browse resolves each with an
        // unspecified address protocol, so either line may carry either address.
        let entries = try b.waitForAvahiBrowse("_harness._tcp") { entries in
            let resolved = entries.filter { $0.event == .resolved && $0.name == "Harness Test" }
            return resolved.contains { $0.networkProtocol == "IPv4" }
                && resolved.contains { $0.networkProtocol == "IPv6" }
        }
        let resolved = entries.filter { $0.event == .resolved && $0.name == "Harness Test" }
        #expect(Set(resolved.map(\.networkProtocol)) == ["IPv4", "IPv6"], "\(entries)")
        for entry in resolved {
            #expect(entry.interface == b.interface)
            #expect(entry.type == "_harness._tcp")
            #expect(entry.domain == "local")
            #expect(entry.hostName == "\(avahiA.hostName).local")
            #expect(entry.address == a.ipv4 || entry.address == a.ipv6, "\(entry)")
            #expect(entry.port == 4242)
            #expect(entry.txt == ["key=value"])
        }
        // And A's host name resolves to each of its addresses through B's Avahi.
        let ipv4 = try b.check(["avahi-resolve", "-4", "-n", "\(avahiA.hostName).local"], timeout: 10).stdout
        #expect(ipv4 == "\(avahiA.hostName).local\t\(a.ipv4)\n")
        let ipv6 = try b.check(["avahi-resolve", "-6", "-n", "\(avahiA.hostName).local"], timeout: 10).stdout
        #expect(ipv6 == "\(avahiA.hostName).local\t\(a.ipv6)\n")

        // Withdrawal: the goodbye reaches B's cache.
        publisher.terminate()
        _ = try b.waitForAvahiBrowse("_harness._tcp", resolve: false, timeout: 10) { entries in
            !entries.contains { $0.name == "Harness Test" }
        }
    }

    // (c)
    @Test("a python-zeroconf service is browsed and resolved by avahi-browse")
    func zeroconfToAvahi() throws {
        let lan = try TestLAN(hosts: 3)
        defer { lan.shutdown() }
        let (b, c) = (lan.hosts[1], lan.hosts[2])
        try b.startAvahi()

        let service = try c.startZeroconf(
            script: """
                info = ServiceInfo(
                    "_harnesszc._tcp.local.",
                    "Zeroconf Harness._harnesszc._tcp.local.",
                    port=4343,
                    properties={"source": "zeroconf", "n": "1"},
                    server=HOST_NAME + ".local.",
                    parsed_addresses=[HOST_IPV4, HOST_IPV6],
                )
                zc.register_service(info)
                ready("registered")
                wait_forever()
                """)
        try service.waitForOutput(containing: "registered", in: .stdout, timeout: 15)

        let entries = try b.waitForAvahiBrowse("_harnesszc._tcp") { entries in
            let resolved = entries.filter { $0.event == .resolved && $0.name == "Zeroconf Harness" }
            return resolved.contains { $0.networkProtocol == "IPv4" }
                && resolved.contains { $0.networkProtocol == "IPv6" }
        }
        let resolved = entries.filter { $0.event == .resolved && $0.name == "Zeroconf Harness" }
        #expect(Set(resolved.map(\.networkProtocol)) == ["IPv4", "IPv6"], "\(entries)")
        for entry in resolved {
            #expect(entry.hostName == "\(c.name).local")
            #expect(entry.address == c.ipv4 || entry.address == c.ipv6, "\(entry)")
            #expect(entry.port == 4343)
            #expect(Set(entry.txt) == ["source=zeroconf", "n=1"])
        }
        let ipv6 = try b.check(["avahi-resolve", "-6", "-n", "\(c.name).local"], timeout: 10).stdout
        #expect(ipv6 == "\(c.name).local\t\(c.ipv6)\n")

        // SIGTERM lets the prelude unregister (goodbye) and close.
        let status = service.terminate(grace: 5)
        #expect(status == 0, "zeroconf script: \(service.stderr)")
    }

    // (d)
    @Test("legacy unicast queries from another host are answered by Avahi")
    func legacyUnicast() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (a, b) = (lan.hosts[0], lan.hosts[1])
        let avahiA = try a.startAvahi()
        let name = "\(avahiA.hostName).local"

        // dig from an ephemeral port, straight to A's port 5353, over IPv4 and IPv6.
        let digA = try b.check(["dig", "-p", "5353", "@\(a.ipv4)", name, "A", "+short", "+time=2", "+tries=2"])
        #expect(digA.stdout.split(separator: "\n").contains(Substring(a.ipv4)), "\(digA)")
        let digAAAA = try b.check(["dig", "-p", "5353", "@\(a.ipv6)", name, "AAAA", "+short", "+time=2", "+tries=2"])
        #expect(digAAAA.stdout.split(separator: "\n").contains(Substring(a.ipv6)), "\(digAAAA)")

        // The same query sent to the mDNS groups, from an unconnected socket.
        let replies4 = try b.legacyQuery(name, type: 1, server: "224.0.0.251", maxReplies: 1)
        let reply4 = try #require(replies4.first { $0.source == a.ipv4 }, "\(replies4)")
        #expect(reply4.sourcePort == 5353)
        #expect(reply4.answers.contains { $0.type == 1 && $0.value == a.ipv4 && $0.name == name + "." }, "\(reply4)")
        // Legacy unicast answers carry a TTL of at most 10 s (RFC 6762 §6.7).
        #expect(reply4.answers.allSatisfy { $0.ttl <= 10 }, "\(reply4)")
        let replies6 = try b.legacyQuery(name, type: 28, server: "ff02::fb", maxReplies: 1)
        #expect(replies6.contains { $0.answers.contains { $0.type == 28 && $0.value == a.ipv6 } }, "\(replies6)")

        // `dig @224.0.0.251` itself cannot see the answer: BIND 9.18's dig
        // connect()s its UDP socket to the server address, so the kernel drops
        // the reply, which comes from A's unicast address. If a future dig
        // accepts it, this known issue stops reproducing and the test says so.
        withKnownIssue("dig 9.18 connects its UDP socket; unicast replies to a multicast-addressed query are dropped") {
            let dig = try b.run(["dig", "-p", "5353", "@224.0.0.251", name, "A", "+short", "+time=1", "+tries=1"])
            #expect(dig.stdout.split(separator: "\n").contains(Substring(a.ipv4)), "\(dig)")
        }
    }

    // (e)
    @Test("teardown leaves no namespace, interface, process or directory behind")
    func teardown() throws {
        let lan = try TestLAN(hosts: 2)
        let prefix = lan.prefix
        try lan.hosts[0].addInterface()
        let avahi = try lan.hosts[0].startAvahi()
        let sleeper = try lan.hosts[1].spawn(["sleep", "600"])
        let pids = lan.hosts.map(\.holderPID) + [avahi.process.pid, avahi.bus.pid, sleeper.pid]
        let namespacesBefore = try Command.check(["ip", "netns", "list"]).stdout
        #expect(namespacesBefore.contains("\(prefix)-br"))
        #expect(namespacesBefore.contains("\(prefix)-h1"))

        lan.shutdown()
        lan.shutdown()

        #expect(lan.leftovers().isEmpty)
        let namespaces = try Command.check(["ip", "netns", "list"]).stdout
        #expect(!namespaces.contains(prefix), "\(namespaces)")
        let links = try Command.check(["ip", "-o", "link", "show"]).stdout
        #expect(!links.contains(prefix), "\(links)")
        for pid in pids {
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "process \(pid) survived the shutdown")
        }
        #expect(!FileManager.default.fileExists(atPath: lan.directory))
        #expect(throws: HarnessError.self) { try lan.hosts[1].spawn(["true"]) }
    }

    @Test("a run that died without cleaning up is swept by the next one")
    func sweepOfStaleRun() throws {
        // A namespace with our prefix, a process in it, and no live owner: what
        // a test process killed with SIGKILL leaves behind.
        var id = ""
        repeat {
            id = String(format: "%04lx", Int.random(in: 0..<0x10000))
        } while try FileManager.default.fileExists(atPath: TestLAN.stateRoot + "/" + id)
            || Command.check(["ip", "netns", "list"]).stdout.contains(TestLAN.namePrefix + id)
        let namespace = TestLAN.namePrefix + id + "-h0"
        try Command.check(["ip", "netns", "add", namespace])
        let nsenter = try Requirements.requireExecutable("nsenter")
        // The process leaves a mark once it runs in the namespace. Other suites' harnesses sweep stale runs
        // when they start, so one of them may kill it before the sweep below; the mark shows it did run.
        let mark = NSTemporaryDirectory() + "herald-sweep-\(id)-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: mark) }
        let orphan = try RunningProcess(
            executable: nsenter,
            arguments: ["--net=/run/netns/\(namespace)", "--", "/bin/sh", "-c", "touch '\(mark)' && exec sleep 600"],
            command: ["sleep", "600"])
        defer {
            orphan.send(SIGKILL)
            _ = try? Command.run(["ip", "netns", "delete", namespace])
        }
        #expect(
            waitUntil(timeout: 5) { FileManager.default.fileExists(atPath: mark) }.held,
            "the stale run's process never started")

        TestLAN.sweepStale()

        #expect(!(try Command.check(["ip", "netns", "list"]).stdout.contains(namespace)))
        #expect(orphan.waitForExit(timeout: 5) != nil, "the stale run's process was not killed")
    }
}
