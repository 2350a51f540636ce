import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension HeraldOnTestLANs {
    /// Avahi's own tools, unmodified, run through heraldd (its D-Bus API on a private bus) and through avahi-daemon
    /// on another host of the same LAN; their outputs must be the same once each side's interface, own name and
    /// addresses and the order of lines are set aside (docs/dbus-api.md, "Side by side with avahi-daemon").
    @Suite("Avahi's tools through heraldd and through avahi-daemon, side by side", .serialized)
    struct AvahiSideBySideTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
            _ = try Requirements.requireExecutable("dbus-daemon")
            _ = try Requirements.requireExecutable("avahi-browse")
            _ = try Requirements.requireExecutable("avahi-resolve")
            _ = try Requirements.requireExecutable("avahi-publish")
        }

        /// The peer's services: three types, TXT records with plain, empty, valueless and spaced strings, an empty
        /// TXT record, and subtypes, and a browsing domain (`b._dns-sd._udp.local`); the subtypes and the domain are
        /// announced by hand, since python-zeroconf publishes neither.
        static let peerServices = """
            from zeroconf import DNSOutgoing, DNSPointer, const
            services = [
                ServiceInfo("_hdsbs-ipp._tcp.local.", "Side Printer._hdsbs-ipp._tcp.local.", port=631,
                            properties={"txtvers": "1", "rp": "printers/side", "note": "two words", "duplex": None},
                            server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4]),
                ServiceInfo("_hdsbs-http._tcp.local.", "Side Web._hdsbs-http._tcp.local.", port=8080,
                            properties={"path": "/index.html", "empty": ""},
                            server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4]),
                ServiceInfo("_hdsbs-udp._udp.local.", "Side Datagram._hdsbs-udp._udp.local.", port=9999,
                            properties={}, server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4]),
            ]
            for info in services:
                zc.register_service(info)
            subtypes = [
                ("_universal._sub._hdsbs-ipp._tcp.local.", "Side Printer._hdsbs-ipp._tcp.local."),
                ("_printer._sub._hdsbs-http._tcp.local.", "Side Web._hdsbs-http._tcp.local."),
                ("b._dns-sd._udp.local.", "herald-sbs.example."),
            ]
            def announce_subtypes():
                out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA)
                for subtype, instance in subtypes:
                    out.add_answer_at_time(
                        DNSPointer(subtype, const._TYPE_PTR, const._CLASS_IN, const._DNS_OTHER_TTL, instance), 0)
                zc.send(out)
            announce_subtypes()
            ready("registered")
            while True:
                time.sleep(1)
                announce_subtypes()
            """

        /// What the python-zeroconf observer prints for each type given (full names): every instance found, and
        /// its resolved host, port, addresses and raw TXT record, in a stable order.
        static let zeroconfObserver = """
            found = {}
            class Listener(ServiceListener):
                def add_service(self, zc_, type_, name):
                    found.setdefault(type_, set()).add(name)
                def update_service(self, zc_, type_, name):
                    found.setdefault(type_, set()).add(name)
                def remove_service(self, zc_, type_, name):
                    pass
            types = sys.argv[1:]
            browsers = [ServiceBrowser(zc, type_, Listener()) for type_ in types]
            time.sleep(3)
            for type_ in types:
                for name in sorted(found.get(type_, ())):
                    info = zc.get_service_info(type_, name, timeout=3000)
                    if info is None:
                        print(f"{type_} {name!r} unresolved")
                        continue
                    print(f"{type_} {name!r} {info.server} {info.port} {sorted(info.parsed_addresses())} {info.text!r}")
            print("done", flush=True)
            """

        /// Runs `argv` through both daemons, up to `attempts` times (a second apart) until the outputs are the
        /// same (each daemon may still be hearing the peer's announcements), prints both and returns them.
        @discardableResult
        func compare(_ argv: [String], on lan: AvahiSideBySide, attempts: Int = 1, timeout: TimeInterval = 20)
            throws -> SideBySideOutputs
        {
            var outputs: SideBySideOutputs
            var attempt = 0
            repeat {
                attempt += 1
                if attempt > 1 { usleep(1_000_000) }
                outputs = SideBySideOutputs(
                    command: argv.joined(separator: " "), herald: try lan.throughHeraldd(argv, timeout: timeout),
                    avahi: try lan.throughAvahi(argv, timeout: timeout), replacing: lan.ownNames)
            } while !outputs.match && attempt < attempts
            print(outputs)
            return outputs
        }

        @Test("avahi-browse -a -r -p -t: the peer's services, TXT and all, the same through both daemons")
        func browseAllResolved() throws {
            let lan = try AvahiSideBySide(peerScript: Self.peerServices)
            defer { lan.shutDown() }
            let outputs = try compare(["avahi-browse", "-a", "-r", "-p", "-t"], on: lan, attempts: 10)
            #expect(outputs.match, "\(outputs)\n\(lan.daemon.log.suffix(3000))")
            // Not two empty listings: every service of the peer is there, resolved.
            for name in ["Side\\032Printer", "Side\\032Web", "Side\\032Datagram"] {
                #expect(outputs.avahiLines.contains { $0.hasPrefix("=;IF;IPv4;\(name);") }, "\(outputs)")
            }
            // Subtypes are not listed by -a (RFC 6763 §7.1): browsed by name, each finds its instance.
            for subtype in ["_universal._sub._hdsbs-ipp._tcp", "_printer._sub._hdsbs-http._tcp"] {
                let sub = try compare(["avahi-browse", "-r", "-p", "-t", subtype], on: lan, attempts: 5)
                #expect(sub.match, "\(sub)")
                #expect(sub.avahiLines.contains { $0.hasPrefix("=;IF;IPv4;Side") }, "\(sub)")
            }
        }

        @Test("avahi-browse -d local -a and avahi-browse -D: the same through both daemons")
        func browseDomains() throws {
            let lan = try AvahiSideBySide(peerScript: Self.peerServices)
            defer { lan.shutDown() }
            let all = try compare(["avahi-browse", "-d", "local", "-a", "-p", "-t"], on: lan, attempts: 10)
            #expect(all.match, "\(all)")
            #expect(all.avahiLines.contains { $0.hasPrefix("+;IF;IPv4;Side\\032Printer;_hdsbs-ipp._tcp;local") })
            let domains = try compare(["avahi-browse", "-D", "-p", "-t"], on: lan, attempts: 3)
            #expect(domains.match, "\(domains)")
            // The browsing domain the peer announces.
            #expect(domains.avahiLines.contains("+;IF;IPv4;herald-sbs.example"), "\(domains)")
        }

        @Test("avahi-resolve -n and -a, found and not found: the same text and exit status through both daemons")
        func resolveNamesAndAddresses() throws {
            let lan = try AvahiSideBySide(hosts: 4, peerScript: Self.peerServices)
            defer { lan.shutDown() }
            // A fourth host whose avahi-daemon publishes its name and reverse-mapping (python-zeroconf, the peer,
            // publishes no reverse mapping).
            let named = lan.lan.hosts[3]
            let namedAvahi = try named.startAvahi()
            let peerName = "\(lan.peerHost.name).local"
            let byName = try compare(["avahi-resolve", "-n", peerName], on: lan, attempts: 5)
            #expect(byName.match, "\(byName)")
            #expect(byName.avahiLines == ["\(peerName)\t\(lan.peerHost.ipv4)"], "\(byName)")
            let byAddress = try compare(["avahi-resolve", "-a", lan.peerHost.ipv4], on: lan)
            #expect(byAddress.match, "\(byAddress)")
            let published = try compare(["avahi-resolve", "-a", named.ipv4], on: lan, attempts: 3)
            #expect(published.match, "\(published)")
            #expect(published.avahiLines == ["\(named.ipv4)\t\(namedAvahi.hostName).local"], "\(published)")
            let missing = try compare(["avahi-resolve", "-n", "nosuchhost.local"], on: lan)
            #expect(missing.match, "\(missing)")
            // avahi-resolve says so on stderr, and exits 0 all the same.
            #expect(missing.avahiErrors == ["Failed to resolve host name 'nosuchhost.local': Timeout reached"])
        }

        @Test("avahi-browse of a type nobody publishes: nothing, AllForNow, exit 0, through both daemons")
        func browseNothing() throws {
            let lan = try AvahiSideBySide(peerScript: nil)
            defer { lan.shutDown() }
            let started = Date()
            let outputs = try compare(["avahi-browse", "-p", "-t", "_nosuch._tcp"], on: lan)
            #expect(outputs.match, "\(outputs)")
            // -t exits at AllForNow: both well within the command's timeout.
            #expect(!outputs.herald.timedOut && !outputs.avahi.timedOut)
            #expect(Date().timeIntervalSince(started) < 15)
            #expect(outputs.avahi.status == 0)
        }

        /// The observers' lines with docs/dbus-api.md's two known differences of a published host set aside, on
        /// either side: heraldd also publishes its IPv6 link-local address when it has a global one (avahi-daemon
        /// does not), and answers over IPv6 with its IPv4 address too (avahi-daemon does not), so a resolver on
        /// IPv6 may find either family's address.
        static func settingAside(_ lines: [String]) -> [String] {
            lines.map { line in
                var fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
                if fields.count > 7, fields[0] == "avahi-browse: =", fields[2] == "IPv6",
                    ["SELF-IPV4", "SELF-IPV6"].contains(fields[7])
                {
                    fields[7] = "SELF-IPV4-OR-IPV6"
                }
                return fields.joined(separator: ";").replacingOccurrences(of: ", 'SELF-LINK-LOCAL'", with: "")
            }.sorted()
        }

        @Test("avahi-publish -s with subtypes and TXT: the peer sees the same records whichever daemon published")
        func publishSeenByPeer() throws {
            let lan = try AvahiSideBySide(hosts: 4, peerScript: nil)
            defer { lan.shutDown() }
            let observer = lan.lan.hosts[3]
            try observer.startAvahi()
            let type = "_hdsbs-pub._tcp"
            let subtypes = ["_sbone._sub.\(type)", "_sbtwo._sub.\(type)"]
            let publish =
                ["avahi-publish", "-s"] + subtypes.flatMap { ["--subtype", $0] }
                + ["Side Pub", type, "4777", "a=1", "b=two words", "flag", "c="]
            /// What the observer host's avahi-browse and the peer's python-zeroconf see of the published service,
            /// once it is there; `names` maps the publisher's own names to placeholders.
            func observe(names: [String: String]) throws -> [String] {
                var lines: [String] = []
                let deadline = Date(timeIntervalSinceNow: 15)
                repeat {
                    var browsed: [String] = []
                    for browsedType in [type] + subtypes {
                        let result = try observer.run(["avahi-browse", "-r", "-p", "-t", browsedType])
                        browsed += result.stdout.split(separator: "\n").map { "avahi-browse: \($0)" }
                    }
                    lines = SideBySideOutputs.normalised(browsed.joined(separator: "\n"), replacing: names)
                    if lines.filter({ $0.hasPrefix("avahi-browse: =;") }).count >= 3 { break }
                    usleep(500_000)
                } while Date() < deadline
                let zeroconf = try lan.peerHost.startZeroconf(
                    script: Self.zeroconfObserver, ipv6: false,
                    arguments: ([type] + subtypes).map { $0 + ".local." }
                ).result(timeout: 30)
                #expect(zeroconf.succeeded, "\(zeroconf)")
                return lines
                    + SideBySideOutputs.normalised(
                        zeroconf.stdout.split(separator: "\n").filter { $0 != "done" }.map { "zeroconf: \($0)" }
                            .joined(separator: "\n"), replacing: names)
            }
            /// Publishes through one side, observes, withdraws, and waits until the observer no longer sees it.
            func publishAndObserve(on host: TestLAN.Host, environment: [String: String], names: [String: String])
                throws -> (result: CommandResult, seen: [String])
            {
                let publisher = try host.spawn(publish, environment: environment)
                defer { publisher.terminate(grace: 2) }
                try publisher.waitForOutput(containing: "Established under name 'Side Pub'", timeout: 15)
                let seen = try observe(names: names)
                publisher.terminate(grace: 2)
                let deadline = Date(timeIntervalSinceNow: 10)
                while Date() < deadline {
                    let left = try observer.run(["avahi-browse", "-p", "-t", type])
                    if !left.stdout.contains("Side\\032Pub") { break }
                    usleep(300_000)
                }
                return (publisher.result(timeout: 5), seen)
            }
            let herald = try publishAndObserve(
                on: lan.heraldHost, environment: ["DBUS_SYSTEM_BUS_ADDRESS": lan.bus.address],
                names: lan.ownNames.herald)
            let avahi = try publishAndObserve(on: lan.avahiHost, environment: [:], names: lan.ownNames.avahi)
            var outputs = SideBySideOutputs(
                command: """
                    \(publish.joined(separator: " ")), seen by the observer's avahi-browse -r and the peer's \
                    python-zeroconf (before the known differences are set aside)
                    """,
                herald: herald.result, avahi: avahi.result, replacing: lan.ownNames)
            outputs.heraldLines = herald.seen
            outputs.avahiLines = avahi.seen
            print(outputs)
            let (heraldSeen, avahiSeen) = (Self.settingAside(herald.seen), Self.settingAside(avahi.seen))
            print(
                "with the known differences set aside: \(heraldSeen == avahiSeen ? "same" : "DIFFERENT")\n"
                    + heraldSeen.joined(separator: "\n"))
            #expect(heraldSeen == avahiSeen, "\(outputs)\n\(lan.daemon.log.suffix(3000))")
            #expect(outputs.heraldErrors == outputs.avahiErrors, "\(outputs)")
            // Not two empty views: the main type and both subtypes resolved, on each observer.
            #expect(avahi.seen.filter { $0.hasPrefix("avahi-browse: =;") }.count >= 3, "\(outputs)")
            #expect(avahi.seen.filter { $0.hasPrefix("zeroconf: ") && $0.contains(" 4777 ") }.count == 3, "\(outputs)")
        }
    }
}
