import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The Swift library HeraldKit against a real heraldd, through `heraldkit-probe` (one library operation
    /// per process, run inside the daemon's namespace): browse, resolve and address lookup of Avahi and
    /// python-zeroconf services, registration seen by Avahi, and cancellation that ends operations on the
    /// daemon's side.
    @Suite("HeraldKit against heraldd", .serialized)
    struct HeraldKitOnTestLANTests {
        init() throws {
            try Requirements.check()
            _ = try KitBinaries.probe()
        }

        @Test(
            "a browse finds what Avahi and python-zeroconf publish in other namespaces; resolve gives the exact TXT bytes and every address"
        )
        func browseAndResolvePeers() throws {
            let lan = try TestLAN(hosts: 3)
            defer { lan.shutdown() }
            let (local, avahiHost, zeroconfHost) = (lan.hosts[0], lan.hosts[1], lan.hosts[2])
            let type = "_hkit._tcp"
            let daemon = try local.startHeraldd()
            try avahiHost.startAvahi()
            let publisher = try avahiHost.spawn([
                "avahi-publish", "-s", "Kit Avahi", type, "4201",
                "path=/x", "flag", "empty=", "utf8=café", "eq=a=b",
            ])
            let zeroconf = try zeroconfHost.startZeroconf(
                script: """
                    info = ServiceInfo(
                        "\(type).local.", "Kit Zeroconf.\(type).local.", port=4202,
                        properties={"bin": b"\\x00\\xff\\x80", "flag": None, "empty": b""},
                        server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4, HOST_IPV6])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """)
            try publisher.waitForOutput(containing: "Established under name 'Kit Avahi'", timeout: 15)
            try zeroconf.waitForOutput(containing: "registered", in: .stdout, timeout: 15)

            let browse = try daemon.spawnProbe(["browse", type])
            let found = waitUntil(timeout: 15) {
                let names = Set(
                    browse.jsonLines.filter { $0["event"] as? String == "added" }.compactMap { $0["name"] as? String })
                return names.isSuperset(of: ["Kit Avahi", "Kit Zeroconf"])
            }
            #expect(found.held, "browse: \(browse.output)\nheraldd:\n\(daemon.log)")
            #expect(browse.jsonLines.first?["state"] as? String == "ready", "\(browse.stdout)")
            for added in browse.jsonLines where added["event"] as? String == "added" {
                #expect(added["type"] as? String == "\(type).", "\(added)")
                #expect(added["interface"] as? Int == Int(local.primary.index), "\(added)")
            }

            let peers: [(name: String, host: TestLAN.Host, port: Int, hostName: String, required: Set<String>)] = [
                (
                    "Kit Avahi", avahiHost, 4201, "\(avahiHost.avahi!.hostName).local.",
                    [avahiHost.ipv4, avahiHost.ipv6]
                ),
                (
                    "Kit Zeroconf", zeroconfHost, 4202, "\(zeroconfHost.name).local.",
                    [zeroconfHost.ipv4, zeroconfHost.ipv6]
                ),
            ]
            for peer in peers {
                // The exact bytes the peer serves, asked of the peer itself with a legacy unicast query.
                let replies = try local.legacyQuery(
                    "\(peer.name).\(type).local", type: 16, server: peer.host.ipv4,
                    timeout: 3, maxReplies: 1)
                let exact = try #require(
                    replies.first?.answers.first { $0.type == 16 }?.value, "\(peer.name): \(replies)")
                let result = try daemon.probe(["resolve", peer.name, type])
                #expect(result.status == 0, "resolve \(peer.name): \(result)")
                let resolved = try #require(HeraldJSON.objects(result.stdout).first, "\(result)")
                #expect((resolved["host"] as? String)?.lowercased() == peer.hostName.lowercased(), "\(resolved)")
                #expect(resolved["port"] as? Int == peer.port, "\(resolved)")
                #expect(
                    resolved["txt"] as? String == exact, "\(peer.name): TXT bytes differ from the peer's: \(resolved)")
                let addresses = Set(resolved["addresses"] as? [String] ?? [])
                #expect(peer.required.isSubset(of: addresses), "\(peer.name): \(resolved)")
                #expect(addresses.isSubset(of: peer.required.union([peer.host.linkLocal])), "\(peer.name): \(resolved)")
            }
            // The TXT keys as the dictionary reads them, in order.
            let avahiKeys =
                try HeraldJSON.objects(daemon.probe(["resolve", "Kit Avahi", type]).stdout).first?["keys"] as? [String]
            #expect(Set(avahiKeys ?? []) == ["path", "flag", "empty", "utf8", "eq"], "\(avahiKeys ?? [])")

            // Address lookup on its own.
            let lookup = try daemon.probe(["lookup", "\(avahiHost.avahi!.hostName).local"])
            let addresses = Set(HeraldJSON.objects(lookup.stdout).first?["addresses"] as? [String] ?? [])
            #expect(Set([avahiHost.ipv4, avahiHost.ipv6]).isSubset(of: addresses), "\(lookup)")

            // A lookup of a name nobody has times out with a clear error.
            let missing = try daemon.probe(["lookup", "nobody-here.local"])
            #expect(missing.status == 1 && missing.stdout.contains("no answer in time"), "\(missing)")

            // The publisher leaves: the browse reports it removed.
            publisher.terminate(grace: 2)
            let removed = waitUntil(timeout: 10) {
                browse.jsonLines.contains {
                    $0["event"] as? String == "removed" && $0["name"] as? String == "Kit Avahi"
                }
            }
            #expect(removed.held, "\(browse.stdout)")
        }

        @Test(
            "a registration is seen by avahi-browse -r with its TXT, and is gone within 2 s of cancelling its handle or its task, or of dropping the handle"
        )
        func registrationWithdrawnOnCancel() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (local, avahiHost) = (lan.hosts[0], lan.hosts[1])
            let type = "_hkitreg._tcp"
            let daemon = try local.startHeraldd()
            try avahiHost.startAvahi()
            let watch = try avahiHost.spawn(["avahi-browse", "-p", "-r", type])
            usleep(1_200_000)  // heraldd announces its host name about a second after starting

            for mode in ["handle", "task", "drop"] {
                let name = "Kit \(mode.capitalized)"
                let register = try daemon.spawnProbe([
                    "register", name, type, "4300", "mode=\(mode)", "flag", "bin=\\x00\\xff",
                    "--cancel", mode,
                ])
                let registered = waitUntil(timeout: 10) {
                    register.jsonLines.contains {
                        $0["event"] as? String == "registered" && $0["name"] as? String == name
                    }
                }
                #expect(registered.held, "\(mode): \(register.output)\nheraldd:\n\(daemon.log)")
                let resolved = waitUntil(timeout: 10) {
                    watch.avahiEntries.contains { $0.event == .resolved && $0.name == name }
                }
                #expect(resolved.held, "\(mode): avahi-browse: \(watch.output)")
                if let entry = watch.avahiEntries.last(where: { $0.event == .resolved && $0.name == name }) {
                    #expect(entry.port == 4300, "\(entry)")
                    #expect(entry.hostName == "\(daemon.hostName).local", "\(entry)")
                    #expect(
                        Set(entry.txt).isSuperset(of: ["mode=\(mode)", "flag"]) && entry.txt.count == 3, "\(entry)")
                }

                let cancelled = Date()
                register.send(SIGUSR1)
                let gone = waitUntil(timeout: 5) {
                    watch.avahiEntries.contains { $0.event == .removed && $0.name == name }
                }
                #expect(gone.held && gone.after < 2, "\(mode): not withdrawn within 2 s (\(gone)): \(watch.output)")
                print(
                    "HeraldKit register, withdrawn by \(mode): gone from avahi-browse \(String(format: "%.3f", Date().timeIntervalSince(cancelled))) s after the cancel"
                )
                // The goodbye came from the cancellation, not from the process going away.
                #expect(register.isRunning, "\(mode): the probe exited: \(register.output)")
                if mode == "task" {
                    #expect(register.jsonLines.contains { $0["event"] as? String == "withdrawn" }, "\(register.stdout)")
                }
                register.terminate(grace: 2)
            }
        }

        @Test("cancelling a browse, through the browser or its task, closes its connection on the daemon's side")
        func browseCancellation() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            for mode in ["handle", "task"] {
                let before = try daemon.openClientConnections()
                let browse = try daemon.spawnProbe(["browse", "_hkitcancel._tcp", "--cancel", mode])
                try browse.waitForOutput(containing: "\"ready\"", in: .stdout, timeout: 10)
                #expect(
                    try daemon.openClientConnections() == before + 1, "\(mode): the browse's connection is not seen")
                browse.send(SIGUSR1)
                let closed = try waitUntil(timeout: 2) { try daemon.openClientConnections() == before }
                #expect(closed.held, "\(mode): the daemon still holds the browse's connection: \(browse.output)")
                print(
                    "HeraldKit browse, cancelled by \(mode): the daemon closed the connection within \(String(format: "%.3f", closed.after)) s (polled every 20 ms)"
                )
                #expect(browse.isRunning, "\(mode): \(browse.output)")
                if mode == "handle" {
                    // The loop saw the end: a cancelled state, then the sequence finished.
                    let ended = waitUntil(timeout: 2) {
                        browse.jsonLines.contains { $0["event"] as? String == "ended" }
                    }
                    #expect(ended.held, "\(browse.stdout)")
                    #expect(browse.jsonLines.contains { $0["state"] as? String == "cancelled" }, "\(browse.stdout)")
                }
                browse.terminate(grace: 2)
            }
        }
    }
}

extension HeraldOnTestLANs {
    /// HeraldKit's answer to permission decisions of a real heraldd, seen by an app (a copy of the probe at the
    /// path its manifest names, run as an unprivileged user): a parked browse is `waiting` and becomes `ready`
    /// with results when an operator grants; a static denial fails at once; a parked registration is `waiting`,
    /// then registered.
    @Suite("HeraldKit under permission decisions", .serialized)
    struct HeraldKitPermissionTests {
        init() throws {
            try Requirements.check()
            _ = try KitBinaries.probe()
        }

        /// A daemon with the probe installed as the tic-tac-toe app (registered, not granted) and a game of
        /// an operator on the network.
        func setUp(_ lan: TestLAN, _ area: PermissionTestArea, register: Bool = true) throws -> (HeraldDaemon, String) {
            let daemon = try lan.hosts[0].startPermissionDaemon(area: area)
            let app = area.directory + "/bin/tictactoe-probe"
            try FileManager.default.copyItem(atPath: try KitBinaries.probe(), toPath: app)
            if register {
                try daemon.control(["app", "add", try area.ticTacToeManifest(executable: app)]).expectSuccess()
            }
            return (daemon, app)
        }

        func spawnApp(_ app: String, _ arguments: [String], _ daemon: HeraldDaemon) throws -> RunningProcess {
            try daemon.host.spawn(
                try AppUser.command([app] + arguments), environment: ["DNSSD_UDS_PATH": daemon.socket])
        }

        @Test(
            "parked then granted: the browse is waiting, then ready with the result; the registration is waiting, then registered"
        )
        func parkedThenGranted() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (daemon, app) = try setUp(lan, area)
            let peer = try daemon.spawnHerald(["register", "Granted Peer", "_tictactoe._tcp", "5000"])
            defer { peer.terminate(grace: 1) }
            try peer.waitForOutput(containing: "Granted Peer", in: .stdout, timeout: 10)

            let browse = try spawnApp(app, ["browse", "_tictactoe._tcp"], daemon)
            defer { browse.terminate(grace: 1) }
            let register = try spawnApp(app, ["register", "Game", "_tictactoe._tcp", "4000"], daemon)
            defer { register.terminate(grace: 1) }
            let parked = waitUntil(timeout: 10) {
                browse.jsonLines.contains { $0["state"] as? String == "waiting" }
                    && register.jsonLines.contains { $0["state"] as? String == "waiting" }
            }
            #expect(parked.held, "\(browse.output)\n\(register.output)")
            #expect(
                !browse.jsonLines.contains { $0["event"] as? String == "added" },
                "nothing before the grant: \(browse.stdout)")
            let reason = browse.jsonLines.first { $0["state"] as? String == "waiting" }?["reason"] as? String ?? ""
            #expect(
                reason.hasPrefix("not-determined: org.example.tictactoe has not been granted"),
                "the daemon's explanation reaches the app: \(browse.stdout)")

            try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
            let granted = waitUntil(timeout: 10) { browse.jsonLines.contains { $0["event"] as? String == "added" } }
            #expect(granted.held, "\(browse.output)")
            let states = browse.jsonLines.compactMap { $0["state"] as? String }
            #expect(states.first == "waiting" && states.contains("ready"), "\(states) from \(browse.stdout)")
            #expect(
                browse.jsonLines.contains {
                    $0["event"] as? String == "added" && $0["name"] as? String == "Granted Peer"
                },
                "\(browse.stdout)")
            let registered = waitUntil(timeout: 10) {
                register.jsonLines.contains { $0["event"] as? String == "registered" }
            }
            #expect(registered.held, "\(register.output)")
            #expect(register.jsonLines.first?["state"] as? String == "waiting", "\(register.stdout)")

            // Denied again: the browse goes back to waiting.
            try daemon.control(["deny", "org.example.tictactoe"]).expectSuccess()
            let waitingAgain = waitUntil(timeout: 10) {
                browse.jsonLines.compactMap { $0["state"] as? String }.last == "waiting"
            }
            #expect(waitingAgain.held, "\(browse.stdout)")
        }

        @Test("a static denial (status NoAuth) fails browse, resolve and registration at once")
        func staticDenial() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (daemon, app) = try setUp(lan, area)

            let browse = try spawnApp(app, ["browse", "_other._tcp"], daemon)
            defer { browse.terminate(grace: 1) }
            let failed = waitUntil(timeout: 10) { browse.jsonLines.contains { $0["event"] as? String == "ended" } }
            #expect(failed.held, "\(browse.output)")
            #expect(browse.jsonLines.compactMap { $0["state"] as? String } == ["failed"], "\(browse.stdout)")

            for arguments in [["register", "Game", "_other._tcp", "4000"], ["resolve", "Someone", "_other._tcp"]] {
                let result = try daemon.host.run(
                    try AppUser.command([app] + arguments), timeout: 10,
                    environment: ["DNSSD_UDS_PATH": daemon.socket])
                #expect(result.status == 1 && result.stdout.contains("NoAuth"), "\(arguments[0]): \(result)")
            }
        }

        @Test("parked and never granted: a resolve gives up with 'not permitted' rather than a plain timeout")
        func parkedResolve() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (daemon, app) = try setUp(lan, area)
            let resolve = try daemon.host.run(
                try AppUser.command([app, "resolve", "Someone", "_tictactoe._tcp"]), timeout: 20,
                environment: ["DNSSD_UDS_PATH": daemon.socket])
            #expect(resolve.status == 1 && resolve.stdout.contains("not permitted"), "\(resolve)")
        }
    }
}
