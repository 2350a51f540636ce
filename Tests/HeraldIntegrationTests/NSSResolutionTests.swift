import Foundation
import Testing

extension HeraldOnTestLANs {
    /// `.local` names for every program: Debian's stock libnss-mdns, talking to heraldd on Avahi's socket path.
    ///
    /// Each host of a TestLAN has its own mount namespace with a private `/run`, so heraldd listens on
    /// `/run/avahi-daemon/socket` there, and a test `nsswitch.conf` is bind-mounted over `/etc/nsswitch.conf`
    /// in that host only; the machine's own files are never touched.
    @Suite("heraldd serving libnss-mdns", .serialized)
    struct NSSResolutionTests {
        /// The hosts line: the minimal module (both families, `.local` names, link-local reverse lookups)
        /// decides `.local` names alone; the full module then takes the reverse lookups of other addresses.
        static let hostsLine = "hosts: files mdns_minimal [NOTFOUND=return] mdns"
        static let avahiSocket = "/run/avahi-daemon/socket"

        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
            _ = try Requirements.requireExecutable("getent")
            let modules = ["/lib", "/usr/lib"].flatMap { root in
                (try? FileManager.default.contentsOfDirectory(atPath: root)).map { entries in
                    entries.filter { $0.hasSuffix("-linux-gnu") }.map { root + "/" + $0 + "/libnss_mdns_minimal.so.2" }
                } ?? []
            }
            guard modules.contains(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw Requirements.Missing(items: [
                    .init(what: "the NSS module libnss_mdns_minimal.so.2 not found", package: "libnss-mdns")
                ])
            }
        }

        /// Replaces /etc/nsswitch.conf inside `host`'s mount namespace only.
        static func useNSSMDNS(in host: TestLAN.Host) throws {
            let file = try host.writeFile(
                named: "nsswitch.conf",
                """
                # Written by the Herald test harness for host \(host.name).
                passwd: files
                group: files
                \(hostsLine)

                """)
            try host.check(["mount", "--bind", file, "/etc/nsswitch.conf"])
            let seen = try host.check(["cat", "/etc/nsswitch.conf"]).stdout
            guard seen.contains(hostsLine) else {
                throw HarnessError.setup("\(host.name): the test nsswitch.conf is not in place:\n\(seen)")
            }
        }

        /// `getent DATABASE KEY` in `host`, with how long it took.
        static func getent(_ database: String, _ key: String, in host: TestLAN.Host) throws -> (
            CommandResult, TimeInterval
        ) {
            let start = Date()
            let result = try host.run(["getent", database, key], timeout: 30)
            return (result, Date().timeIntervalSince(start))
        }

        @Test(
            "getent resolves names of Avahi and Herald hosts forward, in both families and in reverse; a missing name fails fast"
        )
        func getentThroughLibnssMDNS() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (client, avahiHost, heraldHost) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            let avahi = try avahiHost.startAvahi(hostName: "nss-avahi")
            _ = try heraldHost.startHeraldd(hostName: "nss-herald")
            try Self.useNSSMDNS(in: client)
            let daemon = try client.startHeraldd(hostName: "nss-client", arguments: ["--nss-socket", Self.avahiSocket])
            #expect(
                try client.run(["test", "-S", Self.avahiSocket]).succeeded,
                "heraldd did not listen on \(Self.avahiSocket)")
            // The other hosts announce their names about a second after they start; wait for both.
            let peersUp = try waitUntil(timeout: 15) {
                let first = try Self.getent("hosts", "\(avahi.hostName).local", in: client).0.succeeded
                let second = try Self.getent("hosts", "nss-herald.local", in: client).0.succeeded
                return first && second
            }
            #expect(peersUp.held, "the peers' names did not resolve within 15 s:\n\(daemon.log)")

            // Forward: `getent hosts` asks for IPv6 first, then IPv4.
            let (avahiName, _) = try Self.getent("hosts", "\(avahi.hostName).local", in: client)
            #expect(avahiName.succeeded, "\(avahiName)")
            let avahiAddresses = [avahiHost.ipv4, avahiHost.ipv6, avahiHost.linkLocal]
            #expect(avahiAddresses.contains { avahiName.stdout.contains($0 + " ") }, "\(avahiName.stdout)")
            #expect(avahiName.stdout.contains("\(avahi.hostName).local"))

            // getaddrinfo for both families: an IPv4 and an IPv6 address of the Herald host.
            let (both, _) = try Self.getent("ahosts", "nss-herald.local", in: client)
            #expect(both.succeeded, "\(both)")
            #expect(both.stdout.contains(heraldHost.ipv4 + " "), "\(both.stdout)")
            // An IPv6 address comes with the interface it was seen on (`%2`), as libnss-mdns passes it on.
            #expect(
                [heraldHost.ipv6, heraldHost.linkLocal].contains {
                    both.stdout.contains($0 + " ") || both.stdout.contains($0 + "%")
                },
                "\(both.stdout)")
            let (v4, _) = try Self.getent("ahostsv4", "\(avahi.hostName).local", in: client)
            #expect(v4.succeeded && v4.stdout.contains(avahiHost.ipv4 + " "), "\(v4)")

            // Reverse, through the PTR records both daemons publish.
            let (reverseAvahi, _) = try Self.getent("hosts", avahiHost.ipv4, in: client)
            #expect(
                reverseAvahi.succeeded && reverseAvahi.stdout.contains("\(avahi.hostName).local"), "\(reverseAvahi)")
            let (reverseHerald, _) = try Self.getent("hosts", heraldHost.ipv6, in: client)
            #expect(reverseHerald.succeeded && reverseHerald.stdout.contains("nss-herald.local"), "\(reverseHerald)")

            // The host's own name and address.
            let (own, _) = try Self.getent("ahostsv4", "nss-client.local", in: client)
            #expect(own.succeeded && own.stdout.contains(client.ipv4 + " "), "\(own)")

            // A name nobody has: libnss-mdns asks for IPv6, then IPv4 (getent hosts) — both answered within
            // about a second in all, where Avahi takes its 5 s timeout for each family.
            let missing = "nss-nobody-\(UInt16.random(in: 0...UInt16.max)).local"
            let (miss, missTime) = try Self.getent("hosts", missing, in: client)
            #expect(!miss.succeeded && !miss.timedOut && miss.stdout.isEmpty, "\(miss)")
            let (missBoth, missBothTime) = try Self.getent("ahosts", "other-" + missing, in: client)
            #expect(!missBoth.succeeded && !missBoth.timedOut, "\(missBoth)")
            let (missReverse, missReverseTime) = try Self.getent("hosts", "10.213.47.249", in: client)
            #expect(!missReverse.succeeded && !missReverse.timedOut, "\(missReverse)")
            print(
                String(
                    format:
                        "nss: miss times through libnss-mdns and heraldd: getent hosts %.2f s, getent ahosts %.2f s, reverse %.2f s",
                    missTime, missBothTime, missReverseTime))
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }

        @Test(
            "a host's NSEC saying it has no IPv6 address ends an IPv6 lookup of its name at once, with the reason in the log"
        )
        func negativeAnswerEndsLookup() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (client, owner) = (lan.hosts[0], lan.hosts[1])
            let configuration = owner.directory + "/ipv4-only.conf"
            try "[network]\nuse-ipv6 = no\n".write(toFile: configuration, atomically: true, encoding: .utf8)
            _ = try owner.startHeraldd(hostName: "nss-v4only", arguments: ["--config", configuration])
            try Self.useNSSMDNS(in: client)
            let daemon = try client.startHeraldd(
                hostName: "nss-asker",
                arguments: [
                    "--nss-socket", Self.avahiSocket,
                    "--log-level", "debug",
                ])
            let up = try waitUntil(timeout: 15) {
                try Self.getent("ahostsv4", "nss-v4only.local", in: client).0.succeeded
            }
            #expect(up.held, "\(daemon.log)")
            let (v6, v6Time) = try Self.getent("ahostsv6", "nss-v4only.local", in: client)
            print(String(format: "nss: IPv6 lookup of an IPv4-only Herald host: %.3f s", v6Time))
            #expect(!v6.timedOut && !v6.stdout.contains(owner.ipv6), "\(v6)")
            #expect(
                daemon.logShows("nss: nss-v4only.local. has no ipv6 address: its owner says so (NSEC)"), "\(daemon.log)"
            )
        }

        @Test(
            "the address-lookup policy applies: an unregistered user's lookup fails, unless lookups are open to everyone"
        )
        func addressLookupPolicy() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (client, peer) = (lan.hosts[0], lan.hosts[1])
            _ = try peer.startHeraldd(hostName: "nss-policy-peer")
            try Self.useNSSMDNS(in: client)
            let setpriv = [
                try Requirements.requireExecutable("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", "--",
            ]
            let asNobody = setpriv + ["getent", "hosts", "nss-policy-peer.local"]
            // A reverse lookup tells who is at an address: the same rules.
            let reverseAsNobody = setpriv + ["getent", "hosts", peer.ipv4]

            var daemon = try client.startHeraldd(hostName: "nss-policy", arguments: ["--nss-socket", Self.avahiSocket])
            let rootSees = try waitUntil(timeout: 15) {
                try Self.getent("hosts", "nss-policy-peer.local", in: client).0.succeeded
            }
            #expect(rootSees.held, "root (an operator) resolves the name:\n\(daemon.log)")
            let refused = try client.run(asNobody, timeout: 30)
            #expect(refused.status == 2, "an unregistered user does not: \(refused)")
            let rootSeesReverse = try Self.getent("hosts", peer.ipv4, in: client).0
            #expect(rootSeesReverse.stdout.contains("nss-policy-peer.local"), "\(rootSeesReverse)\n\(daemon.log)")
            let refusedReverse = try client.run(reverseAsNobody, timeout: 30)
            #expect(refusedReverse.status == 2, "nor its reverse lookup: \(refusedReverse)")
            #expect(daemon.logShows("not permitted"), "\(daemon.log)")
            daemon.stop()

            let config = try client.writeFile(named: "open-lookups.conf", "[permissions]\naddress-lookups = everyone\n")
            daemon = try client.startHeraldd(
                hostName: "nss-policy", arguments: ["--nss-socket", Self.avahiSocket, "--config", config])
            let opened = try waitUntil(timeout: 15) { try client.run(asNobody, timeout: 30).succeeded }
            #expect(opened.held, "with address-lookups = everyone anyone resolves it:\n\(daemon.log)")
            let openedReverse = try client.run(reverseAsNobody, timeout: 30)
            #expect(openedReverse.stdout.contains("nss-policy-peer.local"), "and its reverse: \(openedReverse)")
        }

        @Test("hostile clients get an error line or are disconnected, and the socket keeps serving")
        func hostileClients() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (client, peer) = (lan.hosts[0], lan.hosts[1])
            _ = try peer.startHeraldd(hostName: "nss-peer")
            let socket = client.directory + "/nss.sock"
            let daemon = try client.startHeraldd(hostName: "nss-client", arguments: ["--nss-socket", socket])
            let script = #"""
                import socket, sys, time
                path = sys.argv[1]
                def ask(payload, close_write=False):
                    # The reply is read even when the daemon closed before taking all of the payload.
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(path)
                    s.settimeout(10)
                    try:
                        s.sendall(payload)
                        if close_write:
                            s.shutdown(socket.SHUT_WR)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    data = b""
                    try:
                        while True:
                            chunk = s.recv(4096)
                            if not chunk:
                                break
                            data += chunk
                    except ConnectionResetError:
                        pass
                    s.close()
                    return data.decode(errors="replace").strip() or "closed"
                idle = []
                for _ in range(300):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(path)
                    idle.append(s)
                print("flood", ask(b"RESOLVE-HOSTNAME-IPV4 nss-peer.local\n"))
                for s in idle:
                    s.close()
                time.sleep(0.2)
                print("long", ask(b"A" * 100000))
                print("binary", ask(bytes(range(256)) + b"\n"))
                print("nul", ask(b"RESOLVE-HOSTNAME\0 x.local\n"))
                print("unterminated", ask(b"HELP", close_write=True))
                print("browse", ask(b"BROWSE-DNS-SERVERS\n"))
                deadline = time.monotonic() + 15
                while True:
                    answer = ask(b"RESOLVE-HOSTNAME-IPV4 nss-peer.local\n")
                    if answer.startswith("+") or time.monotonic() > deadline:
                        break
                    time.sleep(0.3)
                print("good", answer)
                """#
            let result = try client.spawnPython(script: script, arguments: [socket]).result(timeout: 60)
            #expect(result.succeeded, "\(result)")
            let lines = Dictionary(
                result.stdout.split(separator: "\n").map { line -> (String, String) in
                    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                }, uniquingKeysWith: { $1 })
            // Past the client limit a connection is told so and closed.
            #expect(lines["flood"] == "-16 Too many clients", "\(result.stdout)")
            #expect(lines["long"] == "-21 Invalid operation", "\(result.stdout)")
            #expect(lines["binary"] == "-21 Invalid operation", "\(result.stdout)")
            #expect(lines["nul"] == "-21 Invalid operation", "\(result.stdout)")
            #expect(lines["unterminated"]?.hasPrefix("+ Available commands") == true, "\(result.stdout)")
            #expect(lines["browse"] == "-32 Not supported", "\(result.stdout)")
            #expect(
                lines["good"]?.hasPrefix("+ ") == true
                    && lines["good"]?.hasSuffix(" nss-peer.local \(peer.ipv4)") == true,
                "\(result.stdout)")
            #expect(daemon.process.isRunning, "\(daemon.log)")
        }
    }
}
