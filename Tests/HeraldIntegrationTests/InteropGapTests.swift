import Foundation
import Testing

/// What real clients written for mDNSResponder expect of the daemon, spoken by hand over the app socket (issue 29):
/// a refusal reaches the program through a reply as well as the status (Apple's client library hides a NoAuth
/// status), `kDNSServiceFlagsTimeout` ends a query, an operation Herald does not implement is Unsupported on a
/// connection that stays open, refusals are logged, and names are taken as liberally as mDNSResponder takes them.
extension HeraldOnTestLANs {
    @Suite("heraldd behaves as clients of mDNSResponder expect", .serialized)
    struct InteropGapTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// Reads one reply frame: `reply(s)` gives (context, op, body); `error_of(body)` its error field.
        static let replies = #"""
            def reply(s):
                header = exactly(s, 28)
                version, length, flags, op = struct.unpack(">IIII", header[:16])
                return header[16:24], op, exactly(s, length)
            def error_of(body):
                return struct.unpack(">IIi", body[:12])[2]
            def strings_of(body, offset, count):
                return [field.decode("utf-8", "replace") for field in body[offset:].split(b"\0")[:count]]
            def is_open(s):
                s.settimeout(0.5)
                try:
                    return "closed" if s.recv(1) == b"" else "data"
                except socket.timeout:
                    return "open"
                finally:
                    s.settimeout(15)
            def property_of(name):
                s = connect()
                request(s, 13, b"ctx-prop", name.encode() + b"\0")
                status = status_of(s)
                length = struct.unpack(">I", exactly(s, 4))[0]
                return exactly(s, length).decode()

            """#

        @Test(
            "an outright refusal answers NoAuth in the status and in a reply on the live connection, for every operation"
        )
        func refusalIsAlsoAReply() throws {
            let area = try PermissionTestArea()
            defer { area.remove() }
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startPermissionDaemon(area: area)
            // The unprivileged user's interpreter matches no manifest: every request is refused at once (rule 2).
            let script =
                DNSSDByHand.python + Self.replies + #"""
                    header = struct.pack(">II", 0, 0)
                    cases = [
                        ("browse", 6, header + b"_hrefused._tcp\0local.\0"),
                        ("resolve", 7, header + b"Someone\0_hrefused._tcp\0local.\0"),
                        ("register", 5, header + b"Mine\0_hrefused._tcp\0local.\0\0" + struct.pack(">HH", 1234, 0)),
                        ("query", 8, header + b"_hrefused._tcp.local.\0" + struct.pack(">HH", 12, 1)),
                        ("addrinfo", 15, header + struct.pack(">I", 0) + b"somehost.local\0"),
                    ]
                    for name, op, body in cases:
                        s = connect()
                        request(s, op, b"ctx-" + name[:4].encode(), body)
                        status = status_of(s)
                        context, reply_op, reply_body = reply(s)
                        print("%s: status %d reply op %d error %d context %s" % (name, status, reply_op, error_of(reply_body),
                              context.decode()), flush=True)
                        if reply_op == 72:
                            # Apple's client library calls back only for address results of type A or AAAA.
                            hostname = strings_of(reply_body, 12, 1)[0]
                            print("addrinfo reply type", struct.unpack(">H", reply_body[12 + len(hostname) + 1:][:2])[0])
                        if reply_op == 65:
                            print("register reply names", strings_of(reply_body, 12, 3))
                        s.close()
                    """#
            let result = try host.run(
                try AppUser.command(["/usr/bin/python3", "-c", script, daemon.socket]), timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            for (name, op) in [("browse", 66), ("resolve", 67), ("register", 65), ("query", 68), ("addrinfo", 72)] {
                #expect(
                    result.stdout.contains(
                        "\(name): status -65555 reply op \(op) error -65555 context ctx-\(name.prefix(4))"),
                    "\(name): \(result)\n\(daemon.log)")
            }
            #expect(result.stdout.contains("addrinfo reply type 1"), "\(result)")
            #expect(result.stdout.contains("register reply names ['Mine', '_hrefused._tcp.', 'local.']"), "\(result)")
        }

        @Test(
            "an unimplemented or unknown operation gets Unsupported on a connection that stays open, and the explanation follows the newest refusal"
        )
        func unsupportedKeepsTheConnection() throws {
            let area = try PermissionTestArea()
            defer { area.remove() }
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startPermissionDaemon(area: area)
            let script =
                DNSSDByHand.python + Self.replies + #"""
                    s = connect()
                    request(s, 6, b"ctx-brws", browse_body("_hrefused._tcp"))
                    print("browse status", status_of(s))
                    print("explanation after NoAuth:", property_of("HeraldPermissionExplanation").split(":")[0], flush=True)
                    # NAT port mapping (DNSServiceNATPortMappingCreate, as dns-sd -X sends it).
                    s = connect()
                    request(s, 14, b"ctx-natp", struct.pack(">IIIHHI", 0, 0, 0, 0, 0, 0))
                    print("port mapping status", status_of(s))
                    print("after port mapping:", is_open(s))
                    # An operation no version of the protocol has, on the same (now established) connection, its status
                    # in band (no error socket).
                    request(s, 99, b"ctx-unkn", b"", ipc_flags=4)
                    print("unknown operation status", status_of(s))
                    print("after unknown operation:", is_open(s))
                    print("explanation after Unsupported:", property_of("HeraldPermissionExplanation").split(":")[0], flush=True)
                    """#
            let result = try host.run(
                try AppUser.command(["/usr/bin/python3", "-c", script, daemon.socket]), timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("browse status -65555"), "\(result)")
            #expect(result.stdout.contains("explanation after NoAuth: unregistered"), "\(result)")
            #expect(result.stdout.contains("port mapping status -65544"), "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("after port mapping: open"), "\(result)")
            #expect(result.stdout.contains("unknown operation status -65544"), "\(result)")
            #expect(result.stdout.contains("after unknown operation: open"), "\(result)")
            #expect(result.stdout.contains("explanation after Unsupported: unsupported"), "\(result)")
            #expect(daemon.logShows("refused operation 14 for client"), "\(daemon.log)")
            #expect(daemon.logShows("Unsupported (-65544): Herald does not implement port-mapping"), "\(daemon.log)")
        }

        @Test(
            "kDNSServiceFlagsTimeout ends a record query and an address lookup after 5 s with kDNSServiceErr_Timeout, answered or not"
        )
        func timeoutFlag() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            let script =
                DNSSDByHand.python + Self.replies + #"""
                    import time
                    timeout_flag = 0x10000
                    start = time.monotonic()
                    silent = connect()
                    request(silent, 8, b"ctx-qry1", struct.pack(">II", timeout_flag, 0) + b"nobody-answers.local.\0"
                            + struct.pack(">HH", 1, 1))
                    print("silent query status", status_of(silent), flush=True)
                    answered = connect()
                    request(answered, 8, b"ctx-qry2", struct.pack(">II", timeout_flag, 0) + sys.argv[2].encode()
                            + b".local.\0" + struct.pack(">HH", 1, 1))
                    print("answered query status", status_of(answered), flush=True)
                    lookup = connect()
                    request(lookup, 15, b"ctx-addr", struct.pack(">III", timeout_flag, 0, 0) + b"nobody-answers.local\0")
                    print("lookup status", status_of(lookup), flush=True)
                    # A client that asks with a timeout and goes away before it ends.
                    gone = connect()
                    request(gone, 8, b"ctx-gone", struct.pack(">II", timeout_flag, 0) + b"nobody-answers.local.\0"
                            + struct.pack(">HH", 28, 1))
                    print("gone status", status_of(gone), flush=True)
                    gone.close()
                    context, op, body = reply(answered)
                    print("answered first: op %d error %d" % (op, error_of(body)), flush=True)
                    context, op, body = reply(answered)
                    print("answered then: op %d error %d after %.1f s" % (op, error_of(body), time.monotonic() - start))
                    context, op, body = reply(silent)
                    name = strings_of(body, 12, 1)[0]
                    print("silent: op %d error %d name %s after %.1f s" % (op, error_of(body), name, time.monotonic() - start))
                    for _ in range(2):
                        context, op, body = reply(lookup)
                        hostname = strings_of(body, 12, 1)[0]
                        rrtype = struct.unpack(">H", body[12 + len(hostname) + 1:][:2])[0]
                        print("lookup: op %d error %d type %d" % (op, error_of(body), rrtype))
                    print("after timeout:", is_open(silent), flush=True)
                    time.sleep(0.5)
                    later = connect()
                    request(later, 6, b"ctx-late", browse_body("_hlater._tcp"))
                    print("later browse status", status_of(later), flush=True)
                    """#
            let result = try host.run(["python3", "-c", script, daemon.socket, daemon.hostName], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("silent query status 0"), "\(result)")
            #expect(result.stdout.contains("answered first: op 68 error 0"), "\(result)")
            #expect(result.stdout.contains("answered then: op 68 error -65568"), "\(result)")
            #expect(result.stdout.contains("silent: op 68 error -65568 name nobody-answers.local."), "\(result)")
            #expect(result.stdout.contains("lookup: op 72 error -65568 type 1"), "\(result)")
            #expect(result.stdout.contains("lookup: op 72 error -65568 type 28"), "\(result)")
            #expect(result.stdout.contains("after timeout: open"), "\(result)")
            #expect(
                result.stdout.contains("gone status 0") && result.stdout.contains("later browse status 0"), "\(result)")
            #expect(daemon.process.isRunning, "a timeout of a client that went away: \(daemon.log)")
            // mDNSResponder's 5 s, not earlier.
            let seconds = result.stdout.split(separator: "\n").first { $0.hasPrefix("silent:") }
                .flatMap { $0.split(separator: " ").dropLast(1).last }.flatMap { Double($0) }
            #expect(seconds.map { $0 >= 4.5 && $0 < 8 } == true, "\(result)")
        }

        @Test("a refused request is logged once per client and reason, with what was asked and why")
        func refusalsAreLogged() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            let script =
                DNSSDByHand.python + Self.replies + #"""
                    s = connect()
                    request(s, 6, b"ctx-bad1", browse_body("_bad type._tcp"))
                    print("first status", status_of(s), flush=True)
                    # The same refused request twice more on the same connection (no error socket: an async error reply).
                    for context in (b"ctx-bad2", b"ctx-bad3"):
                        request(s, 6, context, browse_body("_bad type._tcp"), ipc_flags=4)
                        reply_context, op, body = reply(s)
                        print("again: op %d error %d" % (op, error_of(body)), flush=True)
                    other = connect()
                    request(other, 6, b"ctx-bad4", browse_body("_bad type._tcp"))
                    print("other client status", status_of(other), flush=True)
                    """#
            let result = try host.run(["python3", "-c", script, daemon.socket], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("first status -65540"), "\(result)")
            #expect(result.stdout.components(separatedBy: "again: op 73 error -65540").count == 3, "\(result)")
            #expect(result.stdout.contains("other client status -65540"), "\(result)")
            _ = waitUntil(timeout: 3) {
                daemon.log.components(separatedBy: "refused browse \"_bad type._tcp\"").count >= 3
            }
            let lines = daemon.log.split(separator: "\n").filter {
                $0.contains("refused browse \"_bad type._tcp\" in \"local.\"")
            }
            #expect(lines.count == 2, "once per client:\n\(daemon.log)")
            #expect(
                lines.allSatisfy {
                    $0.contains("BadParam (-65540)") && $0.contains("letters, digits, hyphens and underscores")
                },
                "\(lines)")
        }

        @Test(
            "names as mDNSResponder takes them: a long service type, a long instance name truncated, a domain in the type refused as Unsupported"
        )
        func liberalNames() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let daemon = try host.startHeraldd()
            let script =
                DNSSDByHand.python + Self.replies + #"""
                    def register(name, regtype, flags=0):
                        s = connect()
                        body = struct.pack(">II", flags, 0) + name.encode() + b"\0" + regtype.encode() + b"\0\0\0" + struct.pack(">HH", 4321, 0)
                        request(s, 5, b"ctx-regs", body)
                        status = status_of(s)
                        if status != 0:
                            return s, status, None
                        context, op, reply_body = reply(s)
                        return s, status, (error_of(reply_body),) + tuple(strings_of(reply_body, 12, 3))
                    kept = []
                    s, status, answer = register("Barrier Desk", "_barrierServerZeroconf._tcp")
                    kept.append(s)
                    print("long type:", status, answer, flush=True)
                    b = connect()
                    request(b, 6, b"ctx-brws", browse_body("_barrierServerZeroconf._tcp"))
                    print("long type browse status", status_of(b))
                    context, op, body = reply(b)
                    print("long type browse found:", strings_of(body, 12, 2), flush=True)
                    long_name = "x" + "\u00e9" * 40
                    s, status, answer = register(long_name, "_hlong._tcp")
                    kept.append(s)
                    print("long name:", status, len(answer[1].encode()), answer[1] == "x" + "\u00e9" * 31, flush=True)
                    s, status, answer = register(long_name, "_hlong._tcp", flags=0x8)
                    print("long name without auto-rename:", status, flush=True)
                    s, status, answer = register("Dotted", "_hdot._tcp.corp")
                    kept.append(s)
                    print("domain in type:", status, answer, flush=True)
                    """#
            let result = try host.run(["python3", "-c", script, daemon.socket], timeout: 60)
            #expect(result.status == 0, "\(result)\n\(daemon.log)")
            #expect(
                result.stdout.contains("long type: 0 (0, 'Barrier Desk', '_barrierServerZeroconf._tcp.', 'local.')"),
                "\(result)")
            #expect(result.stdout.contains("long type browse status 0"), "\(result)")
            #expect(
                result.stdout.contains("long type browse found: ['Barrier Desk', '_barrierServerZeroconf._tcp.']"),
                "\(result)")
            #expect(result.stdout.contains("long name: 0 63 True"), "\(result)\n\(daemon.log)")
            #expect(result.stdout.contains("long name without auto-rename: -65540"), "\(result)")
            // A type with a domain of its own is not served (Herald does no unicast DNS-SD): Unsupported, no reply.
            #expect(result.stdout.contains("domain in type: -65544 None"), "\(result)\n\(daemon.log)")
        }

        /// `dns-sd -R` and `avahi-publish` publish TXT entries as given; so does `herald register`, with warnings.
        @Test(
            "herald register publishes a repeated key, a key that is not ASCII and an empty key as given, with warnings"
        )
        func txtAsGiven() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            let entries = ["a=1", "A=2", "clé=v", "=orphan", "flag"]
            let register = try daemon.spawnHerald(["register", "Loose", "_hloose._tcp", "5200"] + entries)
            defer { register.terminate(grace: 1) }
            try register.waitForOutput(containing: "Loose\n", in: .stdout, timeout: 10)
            #expect(register.stderr.contains("TXT key 'A' is given more than once"), "\(register.output)")
            #expect(
                register.stderr.contains("TXT entry 'clé=v' has a key that is not printable ASCII"),
                "\(register.output)")
            #expect(register.stderr.contains("TXT entry '=orphan' has an empty key"), "\(register.output)")
            let resolved = HeraldJSON.objects(try daemon.herald(["resolve", "Loose", "_hloose._tcp", "--json"]).stdout)
                .first
            #expect(resolved?["txt"] as? [String] == entries, "\(String(describing: resolved))")
        }
    }
}
