import Foundation
import Testing

extension HeraldOnTestLANs {
    /// What `herald register` advertises is seen by Avahi and python-zeroconf, and is withdrawn from both
    /// quickly when herald exits; name conflicts with Avahi end in a rename on Herald's side (docs/scenarios.md,
    /// "Interoperability").
    @Suite(
        "Herald's registrations as Avahi and python-zeroconf see them",
        .serialized
    )
    struct RegistrationInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// A python-zeroconf browser: argv is the base type then subtypes to browse too; prints one JSON line
        /// per event (`added`/`updated` with the resolved service, `removed`), resolving with the base type.
        static let zeroconfBrowser = """
            import json, queue
            base = sys.argv[1]
            events = queue.Queue()
            def on_change(zeroconf, service_type, name, state_change):
                events.put((service_type, name, state_change))
            browsers = [ServiceBrowser(zc, t, handlers=[on_change]) for t in sys.argv[1:]]
            ready("browsing")
            while True:
                service_type, name, change = events.get()
                entry = {"type": service_type, "name": name, "time": time.monotonic()}
                if change is ServiceStateChange.Removed:
                    entry["event"] = "removed"
                else:
                    entry["event"] = "added" if change is ServiceStateChange.Added else "updated"
                    info = zc.get_service_info(base, name, timeout=3000)
                    if info is not None:
                        entry.update(server=info.server, port=info.port, addresses=sorted(info.parsed_addresses()),
                                     txt=info.text.hex())
                print(json.dumps(entry), flush=True)
            """

        @Test(
            "a herald registration is found and resolved by avahi-browse and python-zeroconf over IPv4 and IPv6, and is gone from both within 2 s of herald exiting"
        )
        func registrationSeenByPeers() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (local, avahiHost, zeroconfHost) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            let type = "_hreg._tcp"
            let name = "Herald Interop"
            let daemon = try local.startHeraldd()
            try avahiHost.startAvahi()

            // Watchers first, so that the time to visibility can be measured.
            let avahiWatch = try avahiHost.spawn(["avahi-browse", "-p", "-r", type])
            let avahiSubtypeWatch = try avahiHost.spawn(["avahi-browse", "-p", "_printer._sub.\(type)"])
            let zeroconfWatch = try zeroconfHost.startZeroconf(
                script: Self.zeroconfBrowser, arguments: ["\(type).local.", "_printer._sub.\(type).local."])
            try zeroconfWatch.waitForOutput(containing: "browsing", in: .stdout, timeout: 15)
            // The host name is announced a second after heraldd starts; let it settle, and let avahi-browse start.
            usleep(1_200_000)

            let txtArguments = ["key=value", "spaced=a b", "flag", "empty=", "bin=\\x00\\xff", "utf8=café"]
            let expectedTXT = txtRData([
                Array("key=value".utf8), Array("spaced=a b".utf8), Array("flag".utf8), Array("empty=".utf8),
                Array("bin=".utf8) + [0x00, 0xFF], Array("utf8=café".utf8),
            ])
            let started = Date()
            let register = try daemon.spawnHerald(
                ["register", name, type, "4242"] + txtArguments + ["--subtype", "_printer", "--json"])
            // Who sees it when, in one polling loop (20 ms resolution), from the start of herald register.
            var seen: [String: TimeInterval] = [:]
            waitUntil(timeout: 10) {
                let now = Date().timeIntervalSince(started)
                if seen["herald"] == nil, register.jsonLines.contains(where: { $0["event"] as? String == "registered" })
                {
                    seen["herald"] = now
                }
                if seen["avahi"] == nil,
                    avahiWatch.avahiEntries.contains(where: { $0.event == .added && $0.name == name })
                {
                    seen["avahi"] = now
                }
                if seen["zeroconf"] == nil,
                    zeroconfWatch.jsonLines.contains(where: { $0["name"] as? String == "\(name).\(type).local." })
                {
                    seen["zeroconf"] = now
                }
                return seen.count == 3
            }
            #expect(seen["herald"] != nil, "herald register: \(register.output)\nheraldd:\n\(daemon.log)")
            #expect(seen["avahi"] != nil, "avahi-browse: \(avahiWatch.output)")
            #expect(seen["zeroconf"] != nil, "zeroconf: \(zeroconfWatch.output)")
            print(
                "register → visible (from starting herald register): herald printed the name after "
                    + "\(seen["herald"].map(format) ?? "never"), avahi-browse showed it after \(seen["avahi"].map(format) ?? "never"), "
                    + "python-zeroconf after \(seen["zeroconf"].map(format) ?? "never")")

            print(
                "$ avahi-browse -p -r \(type)   (seeing herald's registration)\n"
                    + avahiWatch.stdout.split(separator: "\n").filter { $0.contains("Interop") }.joined(separator: "\n")
            )
            print("python-zeroconf browser (seeing herald's registration):\n" + zeroconfWatch.stdout)

            // herald printed the requested name: nothing renamed it.
            let event = register.jsonLines.first { $0["event"] as? String == "registered" }
            #expect(event?["name"] as? String == name && event?["renamed"] as? Bool == false, "\(register.stdout)")

            // avahi-browse -r: resolved over IPv4 and over IPv6, with the host, port, an address of ours and the TXT.
            let resolvedBoth = waitUntil(timeout: 10) {
                Set(avahiWatch.avahiEntries.filter { $0.event == .resolved && $0.name == name }.map(\.networkProtocol))
                    == ["IPv4", "IPv6"]
            }
            #expect(resolvedBoth.held, "avahi-browse -r did not resolve over both protocols: \(avahiWatch.output)")
            for entry in avahiWatch.avahiEntries where entry.event == .resolved && entry.name == name {
                #expect(entry.hostName == "\(daemon.hostName).local", "\(entry)")
                #expect([local.ipv4, local.ipv6, local.linkLocal].contains(entry.address ?? ""), "\(entry)")
                #expect(entry.port == 4242, "\(entry)")
                #expect(entry.type == type && entry.domain == "local", "\(entry)")
                // avahi-browse prints the TXT strings it can as text; the binary one is checked through zeroconf.
                #expect(
                    Set(["key=value", "spaced=a b", "flag", "empty=", "utf8=café"]).isSubset(of: Set(entry.txt)),
                    "\(entry)")
                #expect(entry.txt.count == 6, "\(entry)")
            }
            #expect(
                waitUntil(timeout: 5) {
                    avahiSubtypeWatch.avahiEntries.contains { $0.event == .added && $0.name == name }
                }.held,
                "the _printer subtype is not browsable with Avahi: \(avahiSubtypeWatch.output)")

            // python-zeroconf: resolved with the exact TXT bytes, both addresses; found through the subtype too.
            let resolvedInZeroconf = waitUntil(timeout: 10) {
                zeroconfWatch.jsonLines.contains {
                    $0["name"] as? String == "\(name).\(type).local." && $0["port"] != nil
                        && ($0["addresses"] as? [String]).map { Set([local.ipv4, local.ipv6]).isSubset(of: Set($0)) }
                            == true
                }
            }
            #expect(resolvedInZeroconf.held, "zeroconf did not resolve both addresses: \(zeroconfWatch.output)")
            if let info = zeroconfWatch.jsonLines.last(where: {
                $0["name"] as? String == "\(name).\(type).local." && $0["port"] != nil
            }) {
                #expect(info["server"] as? String == "\(daemon.hostName).local.", "\(info)")
                #expect(info["port"] as? Int == 4242, "\(info)")
                #expect(info["txt"] as? String == hex(expectedTXT), "\(info)")
                #expect(
                    Set(info["addresses"] as? [String] ?? []).isSubset(of: [local.ipv4, local.ipv6, local.linkLocal]),
                    "\(info)")
            }
            #expect(
                zeroconfWatch.jsonLines.contains {
                    ($0["type"] as? String)?.hasPrefix("_printer._sub.") == true && $0["event"] as? String == "added"
                },
                "zeroconf did not find the subtype: \(zeroconfWatch.output)")

            // herald exits: goodbyes take the service away from both within 2 s.
            let stopped = Date()
            register.send(SIGINT)
            #expect(register.waitForExit(timeout: 5) == 0, "herald register: \(register.output)")
            #expect(register.jsonLines.last?["event"] as? String == "withdrawn", "\(register.stdout)")
            let goneFromAvahi = waitUntil(timeout: 5) {
                Set(avahiWatch.avahiEntries.filter { $0.event == .removed && $0.name == name }.map(\.networkProtocol))
                    == ["IPv4", "IPv6"]
            }
            let avahiDelay = Date().timeIntervalSince(stopped)
            let goneFromZeroconf = waitUntil(timeout: 5) {
                zeroconfWatch.jsonLines.contains {
                    $0["event"] as? String == "removed" && $0["name"] as? String == "\(name).\(type).local."
                }
            }
            let zeroconfDelay = Date().timeIntervalSince(stopped)
            print(
                "herald exit → gone: avahi-browse after \(format(avahiDelay)), python-zeroconf after \(format(zeroconfDelay))"
            )
            #expect(goneFromAvahi.held && avahiDelay <= 2, "avahi-browse (after \(avahiDelay) s): \(avahiWatch.output)")
            #expect(
                goneFromZeroconf.held && zeroconfDelay <= 2,
                "zeroconf (after \(zeroconfDelay) s): \(zeroconfWatch.output)")
        }

        @Test(
            "registering a name Avahi holds renames Herald's service to \"Name (2)\", and heraldd with Avahi's host name becomes name-2; both stay visible"
        )
        func conflictsWithAvahi() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, avahiHost) = (lan.hosts[0], lan.hosts[1])
            let type = "_hconf._tcp"
            let shared = "hconflict\(lan.id)"
            let avahi = try avahiHost.startAvahi(hostName: shared)
            #expect(avahi.hostName == shared)
            let publisher = try avahiHost.spawn(["avahi-publish", "-s", "Taken Name", type, "5000", "owner=avahi"])
            try publisher.waitForOutput(containing: "Established under name 'Taken Name'", timeout: 15)

            // heraldd wants Avahi's host name: Avahi defends it, Herald moves to name-2.
            let daemon = try local.startHeraldd(hostName: shared)
            let register = try daemon.spawnHerald(["register", "Taken Name", type, "5001", "owner=herald", "--json"])
            let renamed = waitUntil(timeout: 15) {
                register.jsonLines.contains { $0["event"] as? String == "registered" }
            }
            #expect(renamed.held, "herald register: \(register.output)\nheraldd:\n\(daemon.log)")
            let event = register.jsonLines.first { $0["event"] as? String == "registered" }
            #expect(
                event?["name"] as? String == "Taken Name (2)" && event?["renamed"] as? Bool == true,
                "\(register.stdout)")
            #expect(daemon.logShows("now publishing as \(shared)-2.local."), "heraldd log:\n\(daemon.log)")

            // Avahi sees both services, each on its own host; neither host name changed on Avahi's side.
            let entries = try avahiHost.waitForAvahiBrowse(type, timeout: 15) { entries in
                let resolved = entries.filter { $0.event == .resolved }
                return resolved.contains { $0.name == "Taken Name" }
                    && resolved.contains { $0.name == "Taken Name (2)" }
            }
            for entry in entries where entry.event == .resolved {
                if entry.name == "Taken Name" {
                    #expect(
                        entry.hostName == "\(shared).local" && entry.port == 5000 && entry.txt == ["owner=avahi"],
                        "\(entry)")
                } else {
                    #expect(entry.name == "Taken Name (2)", "\(entry)")
                    #expect(
                        entry.hostName == "\(shared)-2.local" && entry.port == 5001 && entry.txt == ["owner=herald"],
                        "\(entry)")
                    #expect([local.ipv4, local.ipv6, local.linkLocal].contains(entry.address ?? ""), "\(entry)")
                }
            }
            let herald4 = try avahiHost.check(["avahi-resolve", "-4", "-n", "\(shared)-2.local"], timeout: 10).stdout
            #expect(herald4 == "\(shared)-2.local\t\(local.ipv4)\n")
            let avahi4 = try avahiHost.check(["avahi-resolve", "-4", "-n", "\(shared).local"], timeout: 10).stdout
            #expect(avahi4 == "\(shared).local\t\(avahiHost.ipv4)\n")
            #expect(
                !avahi.process.stderr.contains("Host name conflict"), "Avahi gave up its name: \(avahi.process.stderr)")
            #expect(publisher.isRunning && !publisher.output.contains("collision"), "\(publisher.output)")
            register.send(SIGINT)
            register.waitForExit(timeout: 5)
        }
    }
}

/// Seconds with millisecond precision, for the timing lines the tests print.
func format(_ seconds: TimeInterval) -> String { String(format: "%.3f s", seconds) }
