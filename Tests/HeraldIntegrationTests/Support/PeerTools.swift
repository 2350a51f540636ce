import Foundation

// Helpers that drive the real peers (Avahi's tools, plain sockets, dig-like
// queries) inside a TestLAN host. Everything here runs through `Host.spawn`,
// so all of its traffic stays inside the LAN's namespaces.

/// One line of `avahi-browse -p` output (`+` found, `-` removed, `=` resolved).
struct AvahiBrowseEntry: Sendable, Equatable, CustomStringConvertible {
    enum Event: String, Sendable {
        case added = "+"
        case removed = "-"
        case resolved = "="
    }
    var event: Event
    var interface: String
    /// "IPv4" or "IPv6": the protocol the answer came over.
    var networkProtocol: String
    var name: String
    var type: String
    var domain: String
    // Only for resolved entries:
    var hostName: String?
    var address: String?
    var port: Int?
    var txt: [String]

    var description: String {
        var text = "\(event.rawValue) \(interface) \(networkProtocol) \"\(name)\" \(type).\(domain)"
        if let hostName, let address, let port {
            text += " \(hostName) \(address):\(port) \(txt)"
        }
        return text
    }

    /// Parses one `-p` line; nil for anything else (warnings, blank lines).
    init?(parsableLine line: Substring) {
        let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 6, let event = Event(rawValue: fields[0]) else { return nil }
        if event == .resolved && fields.count != 10 { return nil }  // not a whole resolved line
        self.event = event
        interface = fields[1]
        networkProtocol = fields[2]
        name = AvahiBrowseEntry.unescape(fields[3])
        type = fields[4]
        domain = fields[5]
        txt = []
        if event == .resolved {
            hostName = fields[6]
            address = fields[7]
            port = Int(fields[8])
            txt = AvahiBrowseEntry.parseTXT(fields[9])
        }
    }

    /// avahi-browse escapes names like DNS presentation format: `\032` is a byte in decimal, `\.` a literal dot.
    static func unescape(_ text: String) -> String {
        var bytes: [UInt8] = []
        let input = Array(text.utf8)
        var i = 0
        while i < input.count {
            if input[i] == UInt8(ascii: "\\"), i + 1 < input.count {
                if i + 3 < input.count, input[(i + 1)...(i + 3)].allSatisfy({ $0 >= 48 && $0 <= 57 }),
                    let value = UInt8(String(decoding: input[(i + 1)...(i + 3)], as: UTF8.self))
                {
                    bytes.append(value)
                    i += 4
                } else {
                    bytes.append(input[i + 1])
                    i += 2
                }
            } else {
                bytes.append(input[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The TXT field: double-quoted strings separated by spaces. Inside, avahi-browse writes `\"` and
    /// `\\` for quotes and backslashes and `\DDD` (decimal) for other bytes it will not print.
    static func parseTXT(_ field: String) -> [String] {
        var strings: [String] = []
        var current: [UInt8]?
        let input = Array(field.utf8)
        var i = 0
        while i < input.count {
            let byte = input[i]
            if var value = current {
                if byte == UInt8(ascii: "\\"), i + 1 < input.count {
                    if i + 3 < input.count, input[(i + 1)...(i + 3)].allSatisfy({ $0 >= 48 && $0 <= 57 }),
                        let decoded = UInt8(String(decoding: input[(i + 1)...(i + 3)], as: UTF8.self))
                    {
                        value.append(decoded)
                        i += 4
                    } else {
                        value.append(input[i + 1])
                        i += 2
                    }
                    current = value
                    continue
                } else if byte == UInt8(ascii: "\"") {
                    strings.append(String(decoding: value, as: UTF8.self))
                    current = nil
                } else {
                    value.append(byte)
                    current = value
                }
            } else if byte == UInt8(ascii: "\"") {
                current = []
            }
            i += 1
        }
        return strings
    }
}

/// A reply to a legacy unicast query, as seen by the querier.
struct LegacyReply: Sendable, CustomStringConvertible {
    struct Record: Sendable, Equatable {
        var name: String
        var type: Int
        var ttl: Int
        /// Dotted/colon notation for A/AAAA, hex otherwise.
        var value: String
    }
    /// The replier's address (without any `%scope`) and port.
    var source: String
    var sourcePort: Int
    var answers: [Record]

    var description: String {
        "from \(source)#\(sourcePort): "
            + answers.map { "\($0.name) \($0.ttl) type\($0.type) \($0.value)" }.joined(separator: ", ")
    }
}

extension TestLAN.Host {
    // MARK: avahi-browse

    /// Runs `avahi-browse -p -t [-r] TYPE` once (it exits after Avahi's "all for
    /// now", about a second) and returns the parsed lines. Needs `startAvahi`.
    func avahiBrowse(_ type: String, resolve: Bool = true, timeout: TimeInterval = 15) throws -> [AvahiBrowseEntry] {
        var argv = ["avahi-browse", "-p", "-t"]
        if resolve { argv.append("-r") }
        argv.append(type)
        let result = try check(argv, timeout: timeout)
        return result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
    }

    /// Repeats `avahiBrowse` until `satisfied` holds for the entries, and
    /// returns them; throws with the last entries seen when `timeout` passes.
    func waitForAvahiBrowse(
        _ type: String, resolve: Bool = true, timeout: TimeInterval = 15,
        until satisfied: ([AvahiBrowseEntry]) -> Bool
    ) throws -> [AvahiBrowseEntry] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var entries: [AvahiBrowseEntry] = []
        repeat {
            entries = try avahiBrowse(type, resolve: resolve, timeout: max(2, deadline.timeIntervalSinceNow))
            if satisfied(entries) { return entries }
            usleep(200_000)
        } while Date() < deadline
        throw HarnessError.setup(
            "\(name): avahi-browse \(type) did not show what was expected within \(timeout) s; last saw:\n"
                + entries.map(\.description).joined(separator: "\n"))
    }

    // MARK: Legacy unicast queries

    /// Sends one DNS query for `name`/`type` from an ephemeral port (a legacy
    /// unicast query, RFC 6762 §6.7) to `server` port 5353 — by default the IPv4
    /// mDNS group; `ff02::fb` is sent out of this host's primary interface — and
    /// collects replies for `timeout` seconds or until `maxReplies` (0: no limit)
    /// have arrived. Unlike `dig`, whose UDP socket is connected and so drops
    /// replies from any address but the one queried, this accepts replies to
    /// multicast-addressed queries.
    func legacyQuery(
        _ name: String, type: Int = 1, server: String = "224.0.0.251",
        timeout: TimeInterval = 1.5, maxReplies: Int = 0
    ) throws -> [LegacyReply] {
        let process = try spawnPython(
            script: PeerScripts.legacyQuery,
            arguments: [name, String(type), server, interface, String(timeout), String(maxReplies)])
        let result = process.result(timeout: timeout + 10)
        guard result.succeeded else { throw HarnessError.commandFailed(command: process.command, result: result) }
        var replies: [LegacyReply] = []
        for line in result.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.first == "reply", fields.count == 3, let port = Int(fields[2]) {
                replies.append(LegacyReply(source: fields[1], sourcePort: port, answers: []))
            } else if fields.first == "answer", fields.count >= 5, !replies.isEmpty,
                let type = Int(fields[fields.count - 3]), let ttl = Int(fields[fields.count - 2])
            {
                // The name may hold spaces (service instance names do): it is everything between.
                let name = fields[1..<(fields.count - 3)].joined(separator: " ")
                replies[replies.count - 1].answers.append(
                    .init(name: name, type: type, ttl: ttl, value: fields[fields.count - 1]))
            }
        }
        return replies
    }

    // MARK: Counting packets

    /// Starts a counter of the mDNS packets sent from the IPv4 address `sender` (see `PeerScripts.packetCounter`):
    /// one JSON line per packet on its stdout, with its kind, questions, answers, goodbyes and size.
    func countPackets(from sender: String) throws -> RunningProcess {
        let counter = try spawnPython(script: PeerScripts.packetCounter, arguments: [interface, ipv4, sender])
        _ = try counter.waitForOutput(containing: "listening", in: .stdout, timeout: 15)
        return counter
    }
}

extension TestLAN {
    /// Starts Avahi on several hosts at once (each takes about a second to
    /// probe its host name) and returns their daemons in the same order.
    @discardableResult
    func startAvahi(on hosts: [Host]) throws -> [AvahiDaemon] {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var values: [Int: Result<AvahiDaemon, Error>] = [:]
        }
        let results = Results()
        let group = DispatchGroup()
        for (index, host) in hosts.enumerated() {
            group.enter()
            Thread.detachNewThread {
                let result = Result { try host.startAvahi() }
                results.lock.lock()
                results.values[index] = result
                results.lock.unlock()
                group.leave()
            }
        }
        group.wait()
        return try hosts.indices.map { try results.values[$0]!.get() }
    }
}

/// Python programs for the peers; plain sockets, no third-party modules.
enum PeerScripts {
    /// argv: TOKEN PEER_TOKEN IFNAME IPV4 [TIMEOUT]. Joins 224.0.0.251 and
    /// ff02::fb on IFNAME, sends "herald-harness TOKEN" to both groups on port
    /// 5353 every 100 ms, and prints `got4 PEER_TOKEN from ADDR` / `got6 …` when
    /// the peer's message arrives over each. Keeps sending for half a second
    /// after it has both (so the peer gets ours too); exits 0 when it got both.
    static let multicastExchange = #"""
        import select, socket, struct, sys, time

        token, peer_token, ifname, ipv4 = sys.argv[1:5]
        timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
        ifindex = socket.if_nametoindex(ifname)
        GROUP4, GROUP6, PORT = "224.0.0.251", "ff02::fb", 5353

        s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        s4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s4.bind(("", PORT))
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                      socket.inet_aton(GROUP4) + socket.inet_aton(ipv4))
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ipv4))
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)

        s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        s6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s6.bind(("", PORT))
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                      socket.inet_pton(socket.AF_INET6, GROUP6) + struct.pack("@I", ifindex))
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)

        message = ("herald-harness " + token).encode()
        expected = ("herald-harness " + peer_token).encode()
        got = {}
        deadline = time.monotonic() + timeout
        linger_until = None
        next_send = 0.0
        while time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_send:
                s4.sendto(message, (GROUP4, PORT))
                s6.sendto(message, (GROUP6, PORT, 0, ifindex))
                next_send = now + 0.1
            if linger_until is None and len(got) == 2:
                linger_until = now + 0.5
            if linger_until is not None and now >= linger_until:
                break
            readable, _, _ = select.select([s4, s6], [], [], 0.05)
            for s in readable:
                data, address = s.recvfrom(9000)
                family = "4" if s is s4 else "6"
                if data == expected and family not in got:
                    got[family] = address[0].split("%")[0]
                    print(f"got{family} {peer_token} from {got[family]}", flush=True)
        print("done" if len(got) == 2 else "incomplete", flush=True)
        sys.exit(0 if len(got) == 2 else 1)
        """#

    /// argv: IFNAME IPV4 SENDER. Joins 224.0.0.251 on IFNAME (sharing port 5353 with any daemon there) and prints,
    /// for every packet from SENDER, one JSON line: `kind` (`probe`, `query` or `response`), `questions`, `answers`,
    /// `goodbyes` (answers with TTL 0) and `size` in bytes. Prints `listening` when ready.
    static let packetCounter = #"""
        import json, socket, struct, sys

        ifname, ipv4, sender = sys.argv[1:4]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.bind(("", 5353))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton(ipv4))

        def skip_name(data, offset):
            while True:
                length = data[offset]
                if length & 0xC0 == 0xC0:
                    return offset + 2
                if length == 0:
                    return offset + 1
                offset += 1 + length

        print("listening", flush=True)
        while True:
            data, address = s.recvfrom(65535)
            if address[0] != sender:
                continue
            flags, qd, an, ns, _ = struct.unpack(">HHHHH", data[2:12])
            offset = 12
            for _ in range(qd):
                offset = skip_name(data, offset) + 4
            goodbyes = 0
            for _ in range(an):
                offset = skip_name(data, offset)
                _, _, ttl, length = struct.unpack(">HHIH", data[offset:offset + 10])
                goodbyes += ttl == 0
                offset += 10 + length
            kind = "response" if flags & 0x8000 else ("probe" if ns else "query")
            print(json.dumps({"kind": kind, "questions": qd, "answers": an, "goodbyes": goodbyes, "size": len(data)}),
                  flush=True)
        """#

    /// argv: NAME TYPE SERVER IFNAME TIMEOUT MAX_REPLIES. Sends one standard
    /// query (id 0x4852, no flags) from an unconnected ephemeral-port socket to
    /// SERVER:5353 and prints, for every reply until TIMEOUT (or MAX_REPLIES
    /// replies, when not 0), `reply ADDR PORT` then `answer NAME TYPE TTL VALUE`
    /// per answer record.
    static let legacyQuery = #"""
        import ipaddress, select, socket, struct, sys, time

        qname, qtype, server, ifname = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        timeout, max_replies = float(sys.argv[5]), int(sys.argv[6])
        ifindex = socket.if_nametoindex(ifname)

        query = struct.pack(">HHHHHH", 0x4852, 0, 1, 0, 0, 0)
        for label in qname.rstrip(".").split("."):
            raw = label.encode()
            query += bytes([len(raw)]) + raw
        query += b"\0" + struct.pack(">HH", qtype, 1)

        if ipaddress.ip_address(server).version == 6:
            s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
            destination = (server, 5353, 0, ifindex if ipaddress.ip_address(server).is_multicast
                           or ipaddress.ip_address(server).is_link_local else 0)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            destination = (server, 5353)
        s.sendto(query, destination)

        def read_name(data, offset):
            labels, jumped, end = [], False, offset
            for _ in range(128):
                length = data[offset]
                if length & 0xC0 == 0xC0:
                    pointer = ((length & 0x3F) << 8) | data[offset + 1]
                    if not jumped:
                        end = offset + 2
                    jumped, offset = True, pointer
                    continue
                if length == 0:
                    if not jumped:
                        end = offset + 1
                    break
                labels.append(data[offset + 1:offset + 1 + length].decode("utf-8", "replace"))
                offset += 1 + length
            return ".".join(labels) + ".", end

        deadline = time.monotonic() + timeout
        replies = 0
        while max_replies == 0 or replies < max_replies:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            readable, _, _ = select.select([s], [], [], remaining)
            if not readable:
                break
            data, address = s.recvfrom(9000)
            replies += 1
            print("reply", address[0].split("%")[0], address[1], flush=True)
            _, _, qd, an, _, _ = struct.unpack(">HHHHHH", data[:12])
            offset = 12
            for _ in range(qd):
                _, offset = read_name(data, offset)
                offset += 4
            for _ in range(an):
                name, offset = read_name(data, offset)
                rtype, _, ttl, rdlength = struct.unpack(">HHIH", data[offset:offset + 10])
                offset += 10
                rdata = data[offset:offset + rdlength]
                offset += rdlength
                if rtype == 1 and rdlength == 4:
                    value = socket.inet_ntop(socket.AF_INET, rdata)
                elif rtype == 28 and rdlength == 16:
                    value = socket.inet_ntop(socket.AF_INET6, rdata)
                else:
                    value = rdata.hex() or "-"
                print("answer", name, rtype, ttl, value, flush=True)
        """#
}
