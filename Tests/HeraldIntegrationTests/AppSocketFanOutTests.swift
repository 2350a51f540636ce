import Foundation
import Testing

extension HeraldOnTestLANs {
    /// One event followed by many app-socket operations: heraldd encodes the reply once and hands it to each
    /// operation with that operation's own client context.
    @Suite("App socket: one event for many browses", .serialized)
    struct AppSocketFanOutTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// Runs `script` (after `DNSSDByHand.python`) as a client on `host`, registers `name` once it prints
        /// "ready", and returns the replies it printed.
        func replies(of script: String, registering name: String, type: String, on host: TestLAN.Host) throws
            -> [String]
        {
            let daemon = try host.startHeraldd()
            let clients = try host.spawn(["python3", "-u", "-c", DNSSDByHand.python + script, daemon.socket])
            defer { clients.terminate(grace: 1) }
            try clients.waitForOutput(containing: "ready", in: .stdout, timeout: 10)
            let register = try daemon.spawnHerald(["register", name, type, "7500"])
            defer { register.terminate(grace: 1) }
            #expect(clients.waitForExit(timeout: 15) == 0, "\(clients.output)\nheraldd:\n\(daemon.log)")
            return clients.stdout.split(separator: "\n").filter { $0.hasPrefix("reply ") }.map(String.init)
        }

        @Test("every browse of a type gets the new instance once, under its own client context")
        func eachBrowseGetsItsOwnContext() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            // Five connections, each browsing the type under a client context of its own.
            let replies = try replies(
                of: #"""
                    connections = []
                    for context in (b"ctx-aaaa", b"ctx-bbbb", b"ctx-cccc", b"ctx-dddd", b"ctx-eeee"):
                        s = connect()
                        request(s, 6, context, browse_body("_hfan._tcp"))
                        expect_status(s)
                        connections.append(s)
                    print("ready")
                    for s in connections:
                        print_reply(s)
                    """#, registering: "Fan Out", type: "_hfan._tcp", on: lan.hosts[0])
            let expected = ["ctx-aaaa", "ctx-bbbb", "ctx-cccc", "ctx-dddd", "ctx-eeee"].map {
                "reply \($0) op 66 more False add True error 0 name Fan Out type _hfan._tcp."
            }
            #expect(replies == expected)
        }

        @Test("in one batch, MoreComing is set on all but each connection's last reply, whoever shares the reply")
        func moreComingPerConnection() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            // A shared connection running two browses of the type, and a connection of its own with a third: the
            // new instance reaches all three in one batch, as one shared reply.
            let replies = try replies(
                of: #"""
                    shared = connect()
                    request(shared, 1, b"ctx-conn", b"")
                    expect_status(shared)
                    no_error_socket = 4
                    request(shared, 6, b"ctx-one1", browse_body("_hmore._tcp"), no_error_socket)
                    request(shared, 6, b"ctx-two2", browse_body("_hmore._tcp"), no_error_socket)
                    alone = connect()
                    request(alone, 6, b"ctx-solo", browse_body("_hmore._tcp"))
                    expect_status(alone)
                    print("ready")
                    print_reply(shared)
                    print_reply(shared)
                    print_reply(alone)
                    """#, registering: "More Coming", type: "_hmore._tcp", on: lan.hosts[0])
            #expect(
                replies == [
                    "reply ctx-one1 op 66 more True add True error 0 name More Coming type _hmore._tcp.",
                    "reply ctx-two2 op 66 more False add True error 0 name More Coming type _hmore._tcp.",
                    "reply ctx-solo op 66 more False add True error 0 name More Coming type _hmore._tcp.",
                ])
        }

        @Test("a browse joining others of its type is told at once what they know, and keeps going when they end")
        func joiningBrowsesShareWhatIsKnown() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (home, away) = (lan.hosts[0], lan.hosts[1])
            let daemon = try home.startHeraldd()
            let peer = try away.startHeraldd()
            let service = try peer.spawnHerald(["register", "Early Bird", "_hjoin._tcp", "7502"])
            defer { service.terminate(grace: 1) }
            try service.waitForOutput(containing: "Early Bird", in: .stdout, timeout: 10)
            // The first browse ends before the others start; the second and third run together, then the second
            // ends; the third is left to see the service go.
            let clients = try home.spawn([
                "python3", "-u", "-c",
                DNSSDByHand.python + #"""
                    def browse(context):
                        s = connect()
                        request(s, 6, context, browse_body("_hjoin._tcp"))
                        expect_status(s)
                        return s
                    first = browse(b"ctx-frst")
                    print_reply(first)
                    first.close()
                    second = browse(b"ctx-scnd")
                    print_reply(second)
                    third = browse(b"ctx-thrd")
                    print_reply(third)
                    second.close()
                    print("ready")
                    print_reply(third)
                    """#, daemon.socket,
            ])
            defer { clients.terminate(grace: 1) }
            try clients.waitForOutput(containing: "ready", in: .stdout, timeout: 15)
            #expect(service.terminate(grace: 3) != nil)
            #expect(clients.waitForExit(timeout: 15) == 0, "\(clients.output)\nheraldd:\n\(daemon.log)")
            let replies = clients.stdout.split(separator: "\n").filter { $0.hasPrefix("reply ") }.map(String.init)
            #expect(
                replies == [
                    "reply ctx-frst op 66 more False add True error 0 name Early Bird type _hjoin._tcp.",
                    "reply ctx-scnd op 66 more False add True error 0 name Early Bird type _hjoin._tcp.",
                    "reply ctx-thrd op 66 more False add True error 0 name Early Bird type _hjoin._tcp.",
                    "reply ctx-thrd op 66 more False add False error 0 name Early Bird type _hjoin._tcp.",
                ])
        }

        @Test("when the last browse of a type ends, heraldd stops asking for it")
        func lastBrowseEndsTheQuestion() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (home, away) = (lan.hosts[0], lan.hosts[1])
            let daemon = try home.startHeraldd()
            // On the other host: every mDNS question for the type, with the second it was seen.
            let listener = try away.spawn([
                "python3", "-u", "-c",
                #"""
                import socket, struct, time
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", 5353))
                s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                             socket.inet_aton("224.0.0.251") + socket.inet_aton("0.0.0.0"))
                s.settimeout(0.2)
                print("listening")
                start = time.monotonic()
                while time.monotonic() - start < 30:
                    try:
                        packet = s.recv(9000)
                    except socket.timeout:
                        continue
                    flags, questions = struct.unpack(">HH", packet[2:6])
                    if flags & 0x8000 == 0 and questions and b"\x06_hgone\x04_tcp" in packet:
                        print("question %.2f" % (time.monotonic() - start))
                """#,
            ])
            defer { listener.terminate(grace: 1) }
            try listener.waitForOutput(containing: "listening", in: .stdout, timeout: 10)
            // Two browses of the type from two processes: the question goes out once they start...
            let browsers = try (0..<2).map { _ in try daemon.spawnHerald(["browse", "_hgone._tcp"]) }
            defer { for browser in browsers { browser.terminate(grace: 1) } }
            try listener.waitForOutput(containing: "question", in: .stdout, timeout: 5)
            // ...keeps going while one of them runs (continuous querying: 1 s, then 2 s, 4 s apart)...
            #expect(browsers[0].terminate(grace: 2) != nil)
            Thread.sleep(forTimeInterval: 3.5)
            let whileOneRuns = listener.stdout.split(separator: "\n").filter { $0.hasPrefix("question") }.count
            #expect(whileOneRuns >= 2, "\(listener.output)\nheraldd:\n\(daemon.log)")
            // ...and stops with the last one: the next query would be due within 4 s.
            #expect(browsers[1].terminate(grace: 2) != nil)
            Thread.sleep(forTimeInterval: 0.5)
            let atEnd = listener.stdout.split(separator: "\n").filter { $0.hasPrefix("question") }.count
            Thread.sleep(forTimeInterval: 6)
            let afterwards = listener.stdout.split(separator: "\n").filter { $0.hasPrefix("question") }.count
            #expect(afterwards == atEnd, "questions after the last browse ended:\n\(listener.output)")
        }

        @Test("browses spelling a type differently each get their own spelling back")
        func eachBrowseKeepsItsSpelling() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let replies = try replies(
                of: #"""
                    lower = connect()
                    request(lower, 6, b"ctx-lowr", browse_body("_hcase._tcp"))
                    expect_status(lower)
                    mixed = connect()
                    request(mixed, 6, b"ctx-mixd", browse_body("_HCase._tcp"))
                    expect_status(mixed)
                    print("ready")
                    print_reply(lower)
                    print_reply(mixed)
                    """#, registering: "Cased", type: "_hcase._tcp", on: lan.hosts[0])
            #expect(
                replies == [
                    "reply ctx-lowr op 66 more False add True error 0 name Cased type _hcase._tcp.",
                    "reply ctx-mixd op 66 more False add True error 0 name Cased type _HCase._tcp.",
                ])
        }

        @Test(
            "an instance name the protocol cannot carry (a NUL byte), or that no client could resolve (other control characters such as a terminal escape, C1 controls, bytes that are not UTF-8), is skipped for every browse, and the next one arrives"
        )
        func unencodableNameIsSkipped() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (home, away) = (lan.hosts[0], lan.hosts[1])
            let daemon = try home.startHeraldd()
            let clients = try home.spawn([
                "python3", "-u", "-c",
                DNSSDByHand.python + #"""
                    connections = []
                    for context in (b"ctx-nul1", b"ctx-nul2", b"ctx-nul3"):
                        s = connect()
                        request(s, 6, context, browse_body("_hnul._tcp"))
                        expect_status(s)
                        connections.append(s)
                    print("ready")
                    for s in connections:
                        print_reply(s)
                    """#, daemon.socket,
            ])
            defer { clients.terminate(grace: 1) }
            try clients.waitForOutput(containing: "ready", in: .stdout, timeout: 10)
            // A peer announces an instance whose label holds a NUL byte, then an ordinary one.
            let announcer = try away.spawn([
                "python3", "-u", "-c",
                #"""
                import socket, struct, time
                def name(*labels):
                    return b"".join(bytes([len(l)]) + l for l in labels) + b"\0"
                def announce(label):
                    ptr = name(b"_hnul", b"_tcp", b"local")
                    target = name(label, b"_hnul", b"_tcp", b"local")
                    answer = ptr + struct.pack(">HHIH", 12, 1, 120, len(target)) + target
                    return struct.pack(">HHHHHH", 0, 0x8400, 0, 1, 0, 0) + answer
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", 5353))
                s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
                for bad in (b"bad\0name", b"bad\x01name", b"bad\x1b[2Jname", b"bad\x7fname", b"bad\xffname", b"bad\xc2\x9bname"):
                    s.sendto(announce(bad), ("224.0.0.251", 5353))
                time.sleep(0.5)
                s.sendto(announce(b"Plain"), ("224.0.0.251", 5353))
                print("sent")
                """#,
            ])
            defer { announcer.terminate(grace: 1) }
            #expect(clients.waitForExit(timeout: 15) == 0, "\(clients.output)\nheraldd:\n\(daemon.log)")
            let replies = clients.stdout.split(separator: "\n").filter { $0.hasPrefix("reply ") }.map(String.init)
            #expect(
                replies
                    == ["ctx-nul1", "ctx-nul2", "ctx-nul3"].map {
                        "reply \($0) op 66 more False add True error 0 name Plain type _hnul._tcp."
                    })
            #expect(daemon.process.isRunning, "heraldd:\n\(daemon.log)")
        }

        @Test("a browse limited to one interface is not grouped with browses of the type on all of them")
        func interfaceBrowsesAreGroupedApart() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            // Interface 999 does not exist: a browse limited to it finds nothing, whatever the others find.
            let replies = try replies(
                of: #"""
                    import select
                    everywhere = connect()
                    request(everywhere, 6, b"ctx-evry", browse_body("_hiface._tcp"))
                    expect_status(everywhere)
                    nowhere = connect()
                    request(nowhere, 6, b"ctx-none", browse_body("_hiface._tcp", 999))
                    expect_status(nowhere)
                    print("ready")
                    print_reply(everywhere)
                    if select.select([nowhere], [], [], 1.5)[0]:
                        print_reply(nowhere)
                    """#, registering: "Somewhere", type: "_hiface._tcp", on: lan.hosts[0])
            #expect(replies == ["reply ctx-evry op 66 more False add True error 0 name Somewhere type _hiface._tcp."])
        }
    }
}
