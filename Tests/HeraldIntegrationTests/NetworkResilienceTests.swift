import Foundation
import Testing

extension HeraldOnTestLANs {
    /// heraldd on networks that are not tidy: hosts with two interfaces on one link and addresses that come
    /// and go, plain DNS clients asking from ordinary ports, and peers that send garbage.
    @Suite(
        "heraldd on real networks",
        .serialized
    )
    struct NetworkResilienceTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        @Test(
            "a host with two interfaces on one link, and a host whose IPv6 addresses come and go, keep their host and service names"
        )
        func namesSurviveInterfaceChanges() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (dual, churn, observer) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            let type = "_hstable._tcp"
            try dual.addInterface()
            let dualDaemon = try dual.startHeraldd()
            let churnDaemon = try churn.startHeraldd()
            try observer.startAvahi()
            let dualRegister = try dualDaemon.spawnHerald(["register", "Dual Homed", type, "6001", "--json"])
            let churnRegister = try churnDaemon.spawnHerald(["register", "Churning", type, "6002", "--json"])
            let bothRegistered = waitUntil(timeout: 10) {
                [dualRegister, churnRegister].allSatisfy {
                    $0.jsonLines.contains { $0["event"] as? String == "registered" }
                }
            }
            #expect(bothRegistered.held, "dual: \(dualRegister.output)\nchurn: \(churnRegister.output)")

            // Addresses come and go on one host; a third interface joins the link on the other.
            for round in 0..<6 {
                let address = "\(TestLAN.ipv6Prefix)\(200 + round)/\(TestLAN.ipv6PrefixLength)"
                try churn.check(["ip", "-6", "address", "add", address, "dev", churn.interface, "nodad"])
                usleep(300_000)
                try churn.check(["ip", "-6", "address", "del", address, "dev", churn.interface])
                usleep(200_000)
                if round == 2 { try dual.addInterface() }
            }
            // Time for the probes and announcements that follow to cross the link (and come back on the other interfaces).
            usleep(2_500_000)

            for (register, name) in [(dualRegister, "Dual Homed"), (churnRegister, "Churning")] {
                let events = register.jsonLines.filter { $0["event"] as? String == "registered" }
                #expect(
                    events.count == 1 && events.first?["name"] as? String == name,
                    "\(name) was renamed: \(register.stdout)")
            }
            for daemon in [dualDaemon, churnDaemon] {
                #expect(
                    !daemon.log.contains("is taken by another host") && !daemon.log.contains("renamed"),
                    "\(daemon.host.name): heraldd renamed something:\n\(daemon.log)")
                #expect(daemon.process.isRunning, "\(daemon.log)")
            }
            let entries = try observer.waitForAvahiBrowse(type, timeout: 15) { entries in
                let resolved = entries.filter { $0.event == .resolved }
                return resolved.contains { $0.name == "Dual Homed" } && resolved.contains { $0.name == "Churning" }
            }
            #expect(Set(entries.map(\.name)) == ["Dual Homed", "Churning"], "\(entries)")
            for entry in entries where entry.event == .resolved {
                let host = entry.name == "Dual Homed" ? dual : churn
                #expect(entry.hostName == "\(host.name).local", "\(entry)")
            }
            let dualAddress = try observer.check(["avahi-resolve", "-4", "-n", "\(dual.name).local"], timeout: 10)
                .stdout
            #expect(dual.interfaces.map { "\(dual.name).local\t\($0.ipv4)\n" }.contains(dualAddress), "\(dualAddress)")
            let churnAddress = try observer.check(["avahi-resolve", "-6", "-n", "\(churn.name).local"], timeout: 10)
                .stdout
            #expect(churnAddress.hasPrefix("\(churn.name).local\t"), "\(churnAddress)")
            dualRegister.send(SIGINT)
            churnRegister.send(SIGINT)
            #expect(dualRegister.waitForExit(timeout: 5) == 0 && churnRegister.waitForExit(timeout: 5) == 0)
        }

        @Test(
            "an interface whose multicast group cannot be joined is tried again after a few seconds, and at once when interfaces change"
        )
        func failedJoinIsTriedAgain() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, listener) = (lan.hosts[0], lan.hosts[1])
            let second = try server.addInterface()
            // One IPv4 group per socket in the server's namespace: heraldd joins on its first interface only.
            try server.check(["sysctl", "-q", "-w", "net.ipv4.igmp_max_memberships=1"])
            let counter = try listener.countPackets(from: second.ipv4)
            let daemon = try server.startHeraldd()
            #expect(
                daemon.logShows("cannot join the mDNS group on \(second.name) (ipv4)", timeout: 10), "\(daemon.log)")
            // Nothing leaves through the second interface meanwhile (the host's probes would, within a second).
            usleep(1_500_000)
            #expect(counter.jsonLines.isEmpty, "\(counter.stdout)")

            // Room for more groups, and no interface changes: heraldd tries again by itself, within seconds.
            try server.check(["sysctl", "-q", "-w", "net.ipv4.igmp_max_memberships=2"])
            #expect(daemon.logShows("using \(second.name) (ipv4, MTU 1500)", timeout: 15), "\(daemon.log)")
            // The host's address records now go out through it too.
            let sent = waitUntil(timeout: 10) { counter.jsonLines.contains { $0["kind"] as? String == "response" } }
            #expect(sent.held, "\(counter.stdout)\n\(daemon.log)")

            // A third interface finds no room; made room for, it is used at the next interface change, before
            // the timer would try it (the MTU in the log line shows which change made heraldd try).
            let third = try server.addInterface()
            #expect(daemon.logShows("cannot join the mDNS group on \(third.name) (ipv4)", timeout: 10), "\(daemon.log)")
            // Both in one command, so that the timer cannot try in between.
            try server.check([
                "sh", "-c", "sysctl -q -w net.ipv4.igmp_max_memberships=20 && ip link set dev \(third.name) mtu 1400",
            ])
            #expect(daemon.logShows("using \(third.name) (ipv4, MTU 1400)", timeout: 10), "\(daemon.log)")
            #expect(!daemon.log.contains("using \(third.name) (ipv4, MTU 1500)"), "\(daemon.log)")
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }

        @Test(
            "an IPv6 MTU set below the interface's sizes the IPv6 link's packets; the IPv4 link keeps the interface's")
        func lowerIPv6MTU() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            try host.check(["sysctl", "-q", "-w", "net.ipv6.conf.\(host.interface).mtu=1280"])
            let daemon = try host.startHeraldd()
            #expect(daemon.logShows("using \(host.interface) (ipv6, MTU 1280)", timeout: 10), "\(daemon.log)")
            #expect(daemon.log.contains("using \(host.interface) (ipv4, MTU 1500)"), "\(daemon.log)")
            // Changed while heraldd runs: seen at the next interface change.
            try host.check(["sysctl", "-q", "-w", "net.ipv6.conf.\(host.interface).mtu=1400"])
            try host.check(["ip", "addr", "add", "fd48:6572:616c:ff::1/64", "dev", host.interface, "nodad"])
            #expect(
                daemon.logShows("MTU of \(host.interface) (ipv6) changed from 1280 to 1400", timeout: 10),
                "\(daemon.log)")
        }

        @Test("interfaces named in the configuration that cannot be used are reported, and the others used")
        func unusableNamedInterfaces() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let denied = try host.addInterface()
            let config = try host.writeFile(named: "deny.conf", "[network]\ndeny-interfaces = \(denied.name)\n")
            let daemon = try host.startHeraldd(
                interfaces: [host.interface, "nosuch0", "lo", denied.name],
                arguments: ["--config", config])
            let warned = waitUntil(timeout: 5) {
                daemon.log.contains(
                    "not using interface nosuch0, which the configuration names: there is no interface of that name")
                    && daemon.log.contains(
                        "not using interface lo, which the configuration names: it is a loopback interface")
                    && daemon.log.contains(
                        "not using interface \(denied.name), which the configuration names: the configuration "
                            + "also denies it (deny-interfaces)")
            }
            #expect(warned.held, "\(daemon.log)")
            #expect(daemon.log.contains("using \(host.interface) (ipv4"), "\(daemon.log)")
            // Once each: a later change of the interfaces does not repeat them.
            try host.check(["ip", "link", "set", "dev", host.interface, "mtu", "1400"])
            #expect(daemon.logShows("MTU of \(host.interface) (ipv4) changed"), "\(daemon.log)")
            #expect(daemon.log.components(separatedBy: "not using interface nosuch0").count == 2, "\(daemon.log)")
        }

        @Test("an IPv6 address is used once duplicate address detection has passed, and never if it found a duplicate")
        func tentativeAddressesWait() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (host, other) = (lan.hosts[0], lan.hosts[1])
            let daemon = try host.startHeraldd()
            // The other host already has fe80::bad:1. This host checks new addresses first (one solicitation).
            try other.check(["ip", "-6", "address", "add", "fe80::bad:1/64", "dev", other.interface, "nodad"])
            try host.check([
                "sysctl", "-q", "-w", "net.ipv6.conf.\(host.interface).accept_dad=1",
                "net.ipv6.conf.\(host.interface).dad_transmits=1",
            ])
            // A duplicate, which detection finds and the kernel never lets anyone send from, and an address of its own,
            // which is usable once detection has passed.
            let fresh = "\(TestLAN.ipv6Prefix)77"
            try host.check(["ip", "-6", "address", "add", "fe80::bad:1/64", "dev", host.interface])
            try host.check([
                "ip", "-6", "address", "add", "\(fresh)/\(TestLAN.ipv6PrefixLength)", "dev", host.interface,
            ])
            let lines = {
                daemon.log.split(separator: "\n").filter { $0.contains(host.interface) && $0.contains("(ipv6") }
            }
            let used = waitUntil(timeout: 10) { lines().contains { $0.contains("changed") && $0.contains(fresh) } }
            #expect(used.held, "\(lines())")
            let flags = try host.check(["ip", "-6", "address", "show", "dev", host.interface]).stdout
            #expect(flags.contains("dadfailed"), "the kernel found the duplicate: \(flags)")
            usleep(1_000_000)
            #expect(!lines().contains { $0.contains("fe80::bad:1") }, "\(lines())")
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }

        @Test("legacy unicast queries (dig to the host's address, and to the IPv4 and IPv6 groups) are answered")
        func legacyUnicast() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, client) = (lan.hosts[0], lan.hosts[1])
            let daemon = try server.startHeraldd()
            let register = try daemon.spawnHerald([
                "register", "Dig Target", "_hdig._tcp", "7000", "path=/dig", "--json",
            ])
            #expect(
                waitUntil(timeout: 10) { register.jsonLines.contains { $0["event"] as? String == "registered" } }.held,
                "\(register.output)\n\(daemon.log)")
            let host = "\(daemon.hostName).local"
            let instance = "Dig\\ Target._hdig._tcp.local"

            func dig(_ server: String, _ name: String, _ type: String, _ options: [String] = ["+short"]) throws
                -> String
            {
                try client.check(["dig", "-p", "5353", "@\(server)", name, type, "+time=2", "+tries=2"] + options)
                    .stdout
            }
            // `registered` is reported only once every link (IPv4 and IPv6) has announced, so both answer at once.
            for address in [server.ipv4, server.ipv6] {
                let answer = try client.run([
                    "dig", "-p", "5353", "@\(address)", instance, "SRV", "+short", "+time=1",
                    "+tries=1",
                ]).stdout
                #expect(answer == "0 0 7000 \(host).\n", "right after registering, dig @\(address): \(answer)")
            }
            let checks: [(String, String, String, (String) -> Bool)] = [
                (server.ipv4, instance, "SRV", { $0 == "0 0 7000 \(host).\n" }),
                (server.ipv4, instance, "TXT", { $0 == "\"path=/dig\"\n" }),
                (server.ipv4, "_hdig._tcp.local", "PTR", { $0 == "Dig\\032Target._hdig._tcp.local.\n" }),
                (server.ipv4, host, "A", { $0.split(separator: "\n") == [Substring(server.ipv4)] }),
                (server.ipv6, host, "AAAA", { $0.split(separator: "\n").contains(Substring(server.ipv6)) }),
                (server.ipv6, instance, "SRV", { $0 == "0 0 7000 \(host).\n" }),
            ]
            for (address, name, type, expected) in checks {
                let answer = try dig(address, name, type)
                #expect(expected(answer), "dig @\(address) \(name) \(type): \(answer)\nheraldd:\n\(daemon.log)")
            }
            // Answers to legacy queries carry at most 10 s of TTL (RFC 6762 §6.7).
            let answer = try dig(server.ipv4, host, "A", ["+noall", "+answer"])
            let ttl = answer.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }
            #expect(ttl.map { $0 <= 10 } == true, "\(answer)")

            // The same questions sent to the groups from an ordinary port.
            let replies4 = try client.legacyQuery(host, type: 1, server: "224.0.0.251", maxReplies: 1)
            let reply4 = try #require(replies4.first { $0.source == server.ipv4 }, "\(replies4)\n\(daemon.log)")
            #expect(reply4.sourcePort == 5353)
            #expect(
                reply4.answers.contains { $0.type == 1 && $0.value == server.ipv4 && $0.name == host + "." },
                "\(reply4)")
            #expect(reply4.answers.allSatisfy { $0.ttl <= 10 }, "\(reply4)")
            let replies6 = try client.legacyQuery(host, type: 28, server: "ff02::fb", maxReplies: 1)
            #expect(
                replies6.contains {
                    $0.source == server.linkLocal && $0.answers.contains { $0.type == 28 && $0.value == server.ipv6 }
                },
                "\(replies6)")
            let srv = try client.legacyQuery(
                "Dig Target._hdig._tcp.local", type: 33, server: "224.0.0.251", maxReplies: 1)
            #expect(srv.first?.answers.contains { $0.type == 33 } == true, "\(srv)")
            register.send(SIGINT)
            register.waitForExit(timeout: 5)
        }

        @Test("a burst of malformed packets from another host does not stop heraldd from answering the next query")
        func malformedBurst() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (server, attacker) = (lan.hosts[0], lan.hosts[1])
            let daemon = try server.startHeraldd()
            let register = try daemon.spawnHerald(["register", "Still Here", "_hburst._tcp", "8000", "--json"])
            #expect(
                waitUntil(timeout: 10) { register.jsonLines.contains { $0["event"] as? String == "registered" } }.held,
                "\(register.output)")

            let burst = try attacker.spawnPython(
                script: Self.malformedSender,
                arguments: [server.ipv4, server.ipv6, attacker.interface, "\(daemon.hostName).local"])
            let result = burst.result(timeout: 60)
            #expect(result.succeeded, "\(result)")
            let sent = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
            #expect(sent.hasPrefix("sent "), "\(result)")

            #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
            let host = "\(daemon.hostName).local"
            let answer = try attacker.check([
                "dig", "-p", "5353", "@\(server.ipv4)", "Still\\ Here._hburst._tcp.local", "SRV",
                "+short", "+time=2", "+tries=2",
            ]).stdout
            #expect(answer == "0 0 8000 \(host).\n", "\(answer)\n\(daemon.log)")
            let replies = try attacker.legacyQuery(host, type: 28, server: "ff02::fb", maxReplies: 1)
            #expect(replies.contains { $0.answers.contains { $0.type == 28 && $0.value == server.ipv6 } }, "\(replies)")
            // Its own clients still get answers too.
            let resolved = try daemon.herald(["resolve", "Still Here", "_hburst._tcp", "--json"])
            #expect(
                resolved.status == 0 && HeraldJSON.objects(resolved.stdout).first?["port"] as? Int == 8000,
                "\(resolved)")
            #expect(
                register.isRunning && register.jsonLines.filter { $0["event"] as? String == "registered" }.count == 1,
                "\(register.output)")
            register.send(SIGINT)
            register.waitForExit(timeout: 5)
        }

        /// argv: SERVER_IPV4 SERVER_IPV6 IFNAME OWN_HOST_NAME. Sends every malformed packet below to the mDNS
        /// groups and to the server's unicast addresses, from port 5353 (so that responses are not ignored as
        /// coming from a non-mDNS port), fewer than 1,000 per source address; prints `sent N`.
        static let malformedSender = #"""
            import os, random, socket, struct, sys

            server4, server6, ifname, own_host = sys.argv[1:5]
            ifindex = socket.if_nametoindex(ifname)
            random.seed(6762)

            def header(qd=0, an=0, ns=0, ar=0, flags=0x8400, ident=0):
                return struct.pack(">6H", ident, flags, qd, an, ns, ar)

            def name(text):
                out = b""
                for label in text.rstrip(".").split("."):
                    raw = label.encode()
                    out += bytes([len(raw)]) + raw
                return out + b"\0"

            def record(owner, rtype, rdata, rdlength=None, ttl=120):
                return owner + struct.pack(">HHIH", rtype, 0x8001, ttl, len(rdata) if rdlength is None else rdlength) + rdata

            packets = []
            # Truncated and empty headers.
            packets += [b"", b"\0", b"\0" * 5, b"\0" * 11]
            # Counts that lie: questions and records announced but absent.
            packets += [header(qd=1, flags=0), header(an=1), header(qd=65535, an=65535, ns=65535, ar=65535)]
            packets += [header(an=65535) + record(name("liar.local"), 1, b"\x0a\0\0\1")]
            # Compression loops: a pointer to itself, two pointers to each other, a chain that goes forward.
            packets += [header(qd=1, flags=0) + b"\xc0\x0c" + struct.pack(">HH", 1, 1)]
            packets += [header(qd=2, flags=0) + b"\xc0\x12" + struct.pack(">HH", 1, 1) + b"\xc0\x0c" + struct.pack(">HH", 1, 1)]
            packets += [header(qd=1, flags=0) + b"\x01a\xc0\x0c" + struct.pack(">HH", 1, 1)]
            packets += [header(qd=1, flags=0) + b"\xc0\xff" + struct.pack(">HH", 1, 1)]
            packets += [header(an=1) + record(b"\xc0\x0c", 1, b"\x0a\0\0\1")]
            # Reserved label types and labels that run past the end.
            packets += [header(qd=1, flags=0) + b"\x41abc\0" + struct.pack(">HH", 1, 1)]
            packets += [header(qd=1, flags=0) + b"\x81abc\0" + struct.pack(">HH", 1, 1)]
            packets += [header(qd=1, flags=0) + b"\x3f" + b"a" * 10]
            # Oversized names: 5 labels of 63 bytes, and a name that passes 255 bytes only through pointers.
            long_name = b"".join(b"\x3f" + bytes([97 + i]) * 63 for i in range(5)) + b"\0"
            packets += [header(qd=1, flags=0) + long_name + struct.pack(">HH", 1, 1)]
            packets += [header(an=1) + record(long_name, 1, b"\x0a\0\0\1")]
            chain = header(an=1)
            offsets = []
            for i in range(6):
                offsets.append(len(chain))
                chain += b"\x3f" + bytes([97 + i]) * 63 + (struct.pack(">H", 0xC000 | offsets[-2]) if i else b"\0")
            chain += struct.pack(">H", 0xC000 | offsets[-1]) + struct.pack(">HHIH", 1, 0x8001, 120, 4) + b"\x0a\0\0\1"
            packets += [chain]
            # Record data that lies: lengths past the end, wrong sizes, compressed targets that loop.
            packets += [header(an=1) + record(name("short.local"), 1, b"\x0a\0\0\1", rdlength=200)]
            packets += [header(an=1) + record(name("short.local"), 1, b"\x0a\0\0")]
            packets += [header(an=1) + record(name("short.local"), 28, b"\0" * 15)]
            srv_owner = name("loop._x._tcp.local")
            srv_loop = header(an=1) + srv_owner + struct.pack(">HHIH", 33, 0x8001, 120, 8) + struct.pack(">HHH", 0, 0, 80)
            srv_loop += struct.pack(">H", 0xC000 | (len(srv_loop)))
            packets += [srv_loop]
            packets += [header(an=1) + record(name("txt._x._tcp.local"), 16, b"\x09abc")]
            packets += [header(an=1) + record(name("nsec.local"), 47, b"\xc0\x0c\x00\x21" + b"\xff" * 33)]
            packets += [header(an=1) + record(name("nsec.local"), 47, name("nsec.local") + b"\x00\x00")]
            packets += [header(an=1) + record(name("nsec.local"), 47, name("nsec.local") + b"\x00\x05\x40")]
            # Questions about our own name with broken tails, and a known-answer section that lies.
            packets += [header(qd=1, an=3, flags=0) + name(own_host) + struct.pack(">HH", 1, 1) + b"\xc0"]
            # Garbage: random bytes, random bytes behind a plausible header, and one 9000-byte datagram.
            for _ in range(120):
                packets.append(os.urandom(random.randrange(1, 600)))
            for _ in range(120):
                packets.append(header(qd=random.randrange(4), an=random.randrange(8), flags=random.choice([0, 0x8400]))
                               + os.urandom(random.randrange(0, 400)))
            packets.append(os.urandom(9000))

            s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s4.bind(("", 5353))
            s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
            s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
            s6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s6.bind(("", 5353))
            s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
            s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)

            sent = 0
            # IPv4: group and unicast share the source address, so each gets half the packets.
            for index, packet in enumerate(packets):
                target = ("224.0.0.251", 5353) if index % 2 == 0 else (server4, 5353)
                try:
                    s4.sendto(packet, target); sent += 1
                except OSError:
                    pass
            # IPv6: to the group (from the link-local address) and to the server's ULA (from ours).
            for packet in packets:
                for target in (("ff02::fb", 5353, 0, ifindex), (server6, 5353, 0, 0)):
                    try:
                        s6.sendto(packet, target); sent += 1
                    except OSError:
                        pass
            print("sent", sent, flush=True)
            """#
    }
}
