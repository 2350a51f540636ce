import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension HeraldOnTestLANs {
    /// Avahi's own tools, unmodified, against heraldd's D-Bus API on a private system bus, on a host with no
    /// avahi-daemon (docs/dbus-api.md): they discover and publish through Herald, under its permission rules.
    @Suite("Avahi's D-Bus API served by heraldd", .serialized)
    struct AvahiDBusAPITests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
            _ = try Requirements.requireExecutable("dbus-daemon")
            _ = try Requirements.requireExecutable("avahi-browse")
        }

        /// A system bus of the test's own: a `dbus-daemon` with the system bus's default policy and Herald's policy
        /// file (`dbus/herald-avahi.conf`), listening in a directory every user can reach.
        final class PrivateBus {
            let directory: String
            let host: TestLAN.Host
            private(set) var process: RunningProcess?
            var address: String { "unix:path=\(directory)/system_bus_socket" }

            /// Writes the bus's configuration and, with `start`, starts it.
            init(on host: TestLAN.Host, start: Bool = true) throws {
                self.host = host
                directory = "/tmp/herald-dbus-\(UUID().uuidString.prefix(8))"
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                let policy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent("dbus/herald-avahi.conf").path
                let config = """
                    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
                     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                    <busconfig>
                      <type>system</type>
                      <listen>unix:path=\(directory)/system_bus_socket</listen>
                      <auth>EXTERNAL</auth>
                      <policy context="default">
                        <allow user="*"/>
                        <deny own="*"/>
                        <deny send_type="method_call"/>
                        <allow send_type="signal"/>
                        <allow send_requested_reply="true" send_type="method_return"/>
                        <allow send_requested_reply="true" send_type="error"/>
                        <allow receive_type="method_call"/>
                        <allow receive_type="method_return"/>
                        <allow receive_type="error"/>
                        <allow receive_type="signal"/>
                        <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                        <allow send_destination="org.freedesktop.DBus"
                               send_interface="org.freedesktop.DBus.Introspectable"/>
                      </policy>
                      <include>\(policy)</include>
                    </busconfig>
                    """
                try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
                guard start else { return }
                do {
                    try self.start()
                } catch {
                    remove()
                    throw error
                }
            }

            /// Starts the bus daemon and waits until it listens.
            func start() throws {
                let started = try host.spawn([
                    "dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--nosyslog",
                    "--print-address",
                ])
                process = started
                try started.waitForOutput(containing: "unix:path=", in: .stdout, timeout: 10)
            }

            /// Kills the bus daemon at once, as a crash would, and removes its socket.
            func kill() {
                process?.send(SIGKILL)
                _ = process?.waitForExit(timeout: 5)
                process = nil
                unlink(directory + "/system_bus_socket")
            }

            func remove() {
                _ = process?.terminate(grace: 1)
                try? FileManager.default.removeItem(atPath: directory)
            }
        }

        /// The Herald host (heraldd on its private bus, no avahi-daemon) and a python-zeroconf peer.
        final class Setting {
            let lan: TestLAN
            let bus: PrivateBus
            let daemon: HeraldDaemon
            let peer: RunningProcess
            static let peerType = "_hdbus._tcp"

            /// `hosts` hosts: the Herald host, the python-zeroconf peer, and any others the test uses.
            init(hosts: Int = 2) throws {
                lan = try TestLAN(hosts: hosts)
                do {
                    bus = try PrivateBus(on: lan.hosts[0])
                } catch {
                    lan.shutdown()
                    throw error
                }
                do {
                    daemon = try lan.hosts[0].startHeraldd(
                        launcher: ["env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)"])
                    #expect(daemon.logShows("D-Bus API: serving org.freedesktop.Avahi", timeout: 10), "\(daemon.log)")
                    peer = try lan.hosts[1].startZeroconf(
                        script: """
                            info = ServiceInfo(
                                "\(Self.peerType).local.", "Peer Service.\(Self.peerType).local.", port=4321,
                                properties={"k": "v"}, server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4])
                            zc.register_service(info)
                            ready("registered")
                            wait_forever()
                            """, ipv6: false)
                    try peer.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
                } catch {
                    bus.remove()
                    lan.shutdown()
                    throw error
                }
            }

            var home: TestLAN.Host { lan.hosts[0] }
            var peerHost: TestLAN.Host { lan.hosts[1] }

            /// `argv` run on the Herald host with the private bus as the system bus.
            func run(_ argv: [String], timeout: TimeInterval = 20) throws -> CommandResult {
                try home.run(argv, timeout: timeout, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            }

            func shutDown() {
                lan.shutdown()
                bus.remove()
            }
        }

        @Test("avahi-browse -r lists and resolves a python-zeroconf peer's service through heraldd, as root")
        func browseAndResolve() throws {
            let setting = try Setting()
            defer { setting.shutDown() }
            var entries: [AvahiBrowseEntry] = []
            let deadline = Date(timeIntervalSinceNow: 15)
            repeat {
                let result = try setting.run(["avahi-browse", "-r", "-p", "-t", Setting.peerType])
                #expect(result.succeeded, "\(result)\n\(setting.daemon.log)")
                entries = result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                if entries.contains(where: { $0.event == .resolved }) { break }
                usleep(300_000)
            } while Date() < deadline
            let added = entries.filter { $0.event == .added }
            #expect(added.contains { $0.name == "Peer Service" && $0.type == Setting.peerType && $0.domain == "local" })
            let resolved = try #require(entries.first { $0.event == .resolved }, "\(entries)")
            #expect(resolved.name == "Peer Service")
            #expect(resolved.port == 4321)
            #expect(resolved.address == setting.peerHost.ipv4)
            #expect(resolved.hostName == "\(setting.peerHost.name).local")
            #expect(resolved.txt == ["k=v"])
            #expect(resolved.networkProtocol == "IPv4")
        }

        @Test("avahi-browse -r prints the same lines through heraldd as through avahi-daemon on the same LAN")
        func sameOutputAsAvahi() throws {
            let setting = try Setting(hosts: 3)
            defer { setting.shutDown() }
            let avahiHost = setting.lan.hosts[2]
            try avahiHost.startAvahi()
            /// The lines about the peer's service, without the interface (each host names its own).
            func lines(_ output: String) -> [String] {
                output.split(separator: "\n").filter { $0.contains("Peer") }.map { line in
                    var fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
                    if fields.count > 1 { fields[1] = "IF" }
                    return fields.joined(separator: ";")
                }.sorted()
            }
            // The first ItemNew of a browse through each daemon (heraldd may have cached the announcements the peer
            // made before avahi-daemon started: a comparison, not a benchmark), then the whole -t listing.
            func firstItem(_ run: (String) throws -> RunningProcess) throws -> TimeInterval {
                let started = Date()
                let browser = try run("avahi-browse -p \(Setting.peerType)")
                defer { browser.terminate(grace: 1) }
                try browser.waitForOutput(containing: "+;", in: .stdout, timeout: 15)
                return Date().timeIntervalSince(started)
            }
            let heraldFirst = try firstItem { command in
                try setting.home.spawn(
                    ["script", "-qfec", command, "/dev/null"],
                    environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            }
            let avahiFirst = try firstItem { command in try avahiHost.spawn(["script", "-qfec", command, "/dev/null"]) }
            let heraldStart = Date()
            let herald = try setting.run(["avahi-browse", "-r", "-p", "-t", Setting.peerType])
            let heraldTime = Date().timeIntervalSince(heraldStart)
            let avahiStart = Date()
            let avahi = try avahiHost.run(["avahi-browse", "-r", "-p", "-t", Setting.peerType])
            let avahiTime = Date().timeIntervalSince(avahiStart)
            #expect(herald.succeeded && avahi.succeeded, "\(herald)\n\(avahi)")
            #expect(!lines(avahi.stdout).isEmpty, "\(avahi)")
            #expect(lines(herald.stdout) == lines(avahi.stdout), "Herald:\n\(herald.stdout)\nAvahi:\n\(avahi.stdout)")
            print(
                """
                avahi-browse -r -p -t \(Setting.peerType) through heraldd (\(String(format: "%.2f", heraldTime)) s, first \
                ItemNew after \(String(format: "%.3f", heraldFirst)) s):
                \(herald.stdout)
                the same through avahi-daemon (\(String(format: "%.2f", avahiTime)) s, first ItemNew after \
                \(String(format: "%.3f", avahiFirst)) s):
                \(avahi.stdout)
                """)
        }

        @Test(
            "Debian's own libdns_sd.so.1 (Avahi's compatibility library, over D-Bus) browses, resolves and queries through heraldd"
        )
        func avahiCompatibilityLibrary() throws {
            let lite = try LibDNSSDPrograms.compile("Examples/dns-sd-lite/dns-sd-lite.c", named: "dns-sd-lite")
            let probe = try LibDNSSDPrograms.compile(
                "Tests/HeraldIntegrationTests/CPrograms/dnssd_probe.c", named: "dnssd_probe")
            // Without Herald's library on the loader path: Debian's, which speaks D-Bus to "avahi-daemon".
            let loaded = try LibDNSSDPrograms.loadedLibrary(of: lite, withHerald: false)
            #expect(loaded?.hasSuffix("-linux-gnu/libdns_sd.so.1") == true, "\(loaded ?? "none")")
            let setting = try Setting()
            defer { setting.shutDown() }
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address]
            var browse = try setting.home.run([lite, "-t", "3", "-B", Setting.peerType], environment: environment)
            for _ in 0..<3 where !browse.stdout.contains("Peer Service") {
                browse = try setting.home.run([lite, "-t", "3", "-B", Setting.peerType], environment: environment)
            }
            #expect(
                browse.stderr.contains("Apple Bonjour compatibility layer of Avahi"),
                "not Avahi's library: \(browse.stderr)")
            #expect(
                browse.stdout.split(separator: "\n").contains {
                    $0.contains("Add") && $0.contains("\(Setting.peerType).") && $0.hasSuffix("Peer Service")
                }, "\(browse)\n\(setting.daemon.log)")
            let resolve = try setting.home.run(
                [lite, "-t", "3", "-L", "Peer Service", Setting.peerType], environment: environment)
            #expect(
                resolve.stdout.contains(
                    "Peer\\032Service.\(Setting.peerType).local. can be reached at \(setting.peerHost.name).local.:4321"
                ),
                "\(resolve)")
            #expect(resolve.stdout.contains(" k=v\n"), "\(resolve)")
            // DNSServiceQueryRecord is Avahi's record browser: the SRV record (port 4321 = 0x10e1).
            let query = try setting.home.run(
                [probe, "query", "Peer Service.\(Setting.peerType).local.", "33", "3"], environment: environment)
            #expect(query.stdout.contains("query return=0"), "\(query)")
            #expect(query.stdout.contains("type=33 class=1") && query.stdout.contains("rdata=0000000010e1"), "\(query)")
        }

        @Test("avahi-publish -s through heraldd is seen by the peer; the service goes when the tool does")
        func publish() throws {
            let setting = try Setting()
            defer { setting.shutDown() }
            let publisher = try setting.home.spawn(
                ["avahi-publish", "-s", "Herald Pub", "_hdpub._tcp", "4555", "k=v"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            try publisher.waitForOutput(containing: "Established under name 'Herald Pub'", timeout: 15)
            let replies = try setting.peerHost.legacyQuery("Herald Pub._hdpub._tcp.local", type: 33, timeout: 2)
            let srv = replies.flatMap(\.answers).filter { $0.type == 33 }
            // SRV data: priority 0, weight 0, port 4555 (0x11cb), then the target.
            #expect(srv.contains { $0.value.hasPrefix("0000000011cb") }, "\(replies)")
            let txt = try setting.peerHost.legacyQuery("Herald Pub._hdpub._tcp.local", type: 16, timeout: 2)
            #expect(txt.flatMap(\.answers).contains { $0.type == 16 && $0.value == "036b3d76" }, "\(txt)")
            publisher.terminate(grace: 2)
            // The tool left the bus: its entry group goes, with goodbyes.
            var gone = false
            let deadline = Date(timeIntervalSinceNow: 5)
            while !gone && Date() < deadline {
                let again = try setting.peerHost.legacyQuery("Herald Pub._hdpub._tcp.local", type: 33, timeout: 1)
                gone = again.flatMap(\.answers).allSatisfy { $0.type != 33 }
            }
            #expect(gone)
        }

        @Test("avahi-publish -a publishes an address through heraldd, answered to the peer")
        func publishAddress() throws {
            let setting = try Setting()
            defer { setting.shutDown() }
            let publisher = try setting.home.spawn(
                ["avahi-publish", "-a", "-R", "hdaddr.local", "10.213.47.250"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            try publisher.waitForOutput(containing: "Established under name 'hdaddr.local'", timeout: 15)
            let replies = try setting.peerHost.legacyQuery("hdaddr.local", type: 1, timeout: 2)
            #expect(replies.flatMap(\.answers).contains { $0.type == 1 && $0.value == "10.213.47.250" }, "\(replies)")
        }

        @Test("a name collision with the peer makes avahi-publish rename, as with avahi-daemon")
        func collisionRenames() throws {
            let setting = try Setting()
            defer { setting.shutDown() }
            let publisher = try setting.home.spawn(
                ["avahi-publish", "-s", "Peer Service", Setting.peerType, "4600"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            try publisher.waitForOutput(containing: "Established under name 'Peer Service #2'", timeout: 20)
            #expect(publisher.stderr.lowercased().contains("collision"), "\(publisher.stderr)")
            let replies = try setting.peerHost.legacyQuery(
                "Peer Service #2.\(Setting.peerType).local", type: 33, timeout: 2)
            // Port 4600 is 0x11f8.
            #expect(
                replies.flatMap(\.answers).contains { $0.type == 33 && $0.value.hasPrefix("0000000011f8") },
                "\(replies)")
        }

        @Test(
            "avahi-browse -a finds the peer's type and service, avahi-resolve -n its host, avahi-resolve -a an address")
        func browseAllAndResolveHost() throws {
            let setting = try Setting()
            defer { setting.shutDown() }
            var entries: [AvahiBrowseEntry] = []
            let deadline = Date(timeIntervalSinceNow: 15)
            repeat {
                let result = try setting.run(["avahi-browse", "-a", "-p", "-t"])
                #expect(result.succeeded, "\(result)")
                entries = result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                if !entries.isEmpty { break }
                usleep(300_000)
            } while Date() < deadline
            #expect(
                entries.contains { $0.event == .added && $0.name == "Peer Service" && $0.type == Setting.peerType },
                "\(entries)")
            // heraldd's own address, which it publishes with its reverse-mapping name.
            let own = try setting.run(["avahi-resolve", "-a", setting.home.ipv4])
            #expect(
                own.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                    == "\(setting.home.ipv4)\t\(setting.daemon.hostName).local", "\(own)")
            let host = "\(setting.peerHost.name).local"
            let resolved = try setting.run(["avahi-resolve", "-4", "-n", host])
            #expect(resolved.succeeded, "\(resolved)")
            #expect(
                resolved.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(host)\t\(setting.peerHost.ipv4)")
        }

        @Test(
            "a registered app waits for a decision; herald grant makes its open avahi-browse list the peer, herald deny withdraws its avahi-publish service within 2 s"
        )
        func grantAndDeny() throws {
            let alice = try TestUser.ensure(TestUser.aliceName)
            let area = try PermissionTestArea()
            defer { area.remove() }
            let setting = try Setting()
            defer { setting.shutDown() }
            // Avahi's tools, registered as one app that declares the peer's type and the one it publishes.
            try setting.daemon.control([
                "app", "add",
                try area.writeManifest(
                    [
                        "id": "org.example.avahitools", "name": "Avahi tools",
                        "executables": ["/usr/bin/avahi-browse", "/usr/bin/avahi-publish"],
                        "NSBonjourServices": [Setting.peerType, "_hdpub._tcp"],
                        "NSLocalNetworkUsageDescription": "Avahi's tools browse and publish.",
                    ], named: "avahi-tools.json"),
            ]).expectSuccess()
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address]
            // On a terminal (script's), so that what it prints is seen while it runs (stdbuf's LD_PRELOAD would make
            // it no app).
            let browser = try setting.home.spawn(
                try alice.command(["script", "-qfec", "avahi-browse -p \(Setting.peerType)", "/dev/null"]),
                environment: environment)
            defer { browser.terminate(grace: 1) }
            // Not decided yet: the browser exists and says nothing.
            usleep(2_500_000)
            #expect(browser.isRunning, "\(browser.output)")
            // avahi-browse -p writes a space as \032.
            #expect(!browser.stdout.contains("Peer\\032Service"), "\(browser.output)")
            try setting.daemon.control(["grant", "org.example.avahitools"]).expectSuccess()
            do {
                try browser.waitForOutput(containing: "+;", in: .stdout, timeout: 10)
                #expect(browser.stdout.contains("Peer\\032Service;\(Setting.peerType);local"), "\(browser.output)")
            } catch {
                Issue.record("\(error)\n\(browser.output)\n\(setting.daemon.log)")
                return
            }

            let publisher = try setting.home.spawn(
                try alice.command(["avahi-publish", "-s", "Alice Pub", "_hdpub._tcp", "4557"]), environment: environment
            )
            defer { publisher.terminate(grace: 1) }
            try publisher.waitForOutput(containing: "Established under name 'Alice Pub'", timeout: 15)
            let name = "Alice Pub._hdpub._tcp.local"
            let before = try setting.peerHost.legacyQuery(name, type: 33, timeout: 1)
            #expect(before.flatMap(\.answers).contains { $0.type == 33 }, "\(before)")
            try setting.daemon.control(["deny", "org.example.avahitools"]).expectSuccess()
            let denied = Date()
            var gone = false
            while !gone && Date().timeIntervalSince(denied) < 5 {
                let answers = try setting.peerHost.legacyQuery(name, type: 33, timeout: 0.3)
                gone = answers.flatMap(\.answers).allSatisfy { $0.type != 33 }
            }
            let elapsed = Date().timeIntervalSince(denied)
            #expect(gone && elapsed < 2, "withdrawn: \(gone), after \(elapsed) s")
            // The tool hears that its group failed, and why.
            try publisher.waitForOutput(containing: "Not permitted", timeout: 5)
        }

        @Test(
            "while avahi-daemon owns the name heraldd waits for it on the bus; once avahi-daemon stops, heraldd serves")
        func takesOverFromAvahi() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (home, peerHost) = (lan.hosts[0], lan.hosts[1])
            // avahi-daemon with the distribution's system bus (its /run/dbus is the host's own), then heraldd on
            // the same bus, found at the standard path.
            let avahi = try home.startAvahi(hostName: "avahi-\(home.name)")
            let daemon = try home.startHeraldd()
            #expect(daemon.logShows("D-Bus API waiting", timeout: 10), "\(daemon.log)")
            let peer = try peerHost.startZeroconf(
                script: """
                    info = ServiceInfo(
                        "_hdtake._tcp.local.", "Taken Over._hdtake._tcp.local.", port=4700,
                        server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """, ipv6: false)
            try peer.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            avahi.process.terminate(grace: 3)
            #expect(
                daemon.logShows("D-Bus API: serving org.freedesktop.Avahi", timeout: 10), "\(daemon.log)")
            var entries: [AvahiBrowseEntry] = []
            let deadline = Date(timeIntervalSinceNow: 15)
            repeat {
                let result = try home.run(["avahi-browse", "-r", "-p", "-t", "_hdtake._tcp"])
                entries = result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                if entries.contains(where: { $0.event == .resolved }) { break }
                usleep(300_000)
            } while Date() < deadline
            #expect(
                entries.contains { $0.event == .resolved && $0.name == "Taken Over" && $0.port == 4700 },
                "\(entries)\n\(daemon.log)")
        }

        @Test("cupsd, a real avahi-client daemon running as root, shares a queue through heraldd: the peer finds it")
        func cupsSharesAQueue() throws {
            _ = try Requirements.requireExecutable("cupsd")
            let setting = try Setting()
            defer { setting.shutDown() }
            let directory = setting.bus.directory + "/cups"
            for sub in ["spool", "tmp", "cache", "state", "log", "ppd"] {
                try FileManager.default.createDirectory(
                    atPath: directory + "/" + sub, withIntermediateDirectories: true)
            }
            try """
            LogLevel debug
            Port 8631
            Browsing Yes
            BrowseLocalProtocols dnssd
            DefaultShared Yes
            WebInterface No
            <Location />
              Order allow,deny
              Allow all
            </Location>

            """.write(toFile: directory + "/cupsd.conf", atomically: true, encoding: .utf8)
            try """
            ServerRoot \(directory)
            RequestRoot \(directory)/spool
            TempDir \(directory)/tmp
            CacheDir \(directory)/cache
            StateDir \(directory)/state
            ErrorLog \(directory)/log/error_log
            AccessLog \(directory)/log/access_log
            PageLog \(directory)/log/page_log
            SystemGroup root
            FileDevice Yes

            """.write(toFile: directory + "/cups-files.conf", atomically: true, encoding: .utf8)
            try """
            <Printer hdprinter>
            Info Herald Test Printer
            DeviceURI file:///dev/null
            State Idle
            Accepting Yes
            Shared Yes
            </Printer>

            """.write(toFile: directory + "/printers.conf", atomically: true, encoding: .utf8)
            let cupsd = try setting.home.spawn(
                ["cupsd", "-f", "-c", directory + "/cupsd.conf", "-s", directory + "/cups-files.conf"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            defer { cupsd.terminate(grace: 2) }
            var found: [LegacyReply] = []
            let deadline = Date(timeIntervalSinceNow: 20)
            repeat {
                found = try setting.peerHost.legacyQuery("_ipp._tcp.local", type: 12, timeout: 1)
                if found.flatMap(\.answers).contains(where: { $0.type == 12 }) { break }
            } while Date() < deadline
            let log = (try? String(contentsOfFile: directory + "/log/error_log", encoding: .utf8)) ?? ""
            // The PTR record's data, in hex, names the instance CUPS chose: "Herald Test Printer @ HOST".
            let instance = "Herald Test Printer @ \(setting.daemon.hostName)".utf8.map { String(format: "%02x", $0) }
                .joined()
            #expect(
                found.flatMap(\.answers).contains { $0.type == 12 && $0.value.contains(instance) },
                "\(found)\ncupsd: \(cupsd.output)\n\(log.suffix(3000))\nheraldd: \(setting.daemon.log)")
        }

        @Test("snapserver, a real avahi-client daemon run by a user as a registered, granted app, is found by the peer")
        func snapserverAsAnApp() throws {
            _ = try Requirements.requireExecutable("snapserver")
            let alice = try TestUser.ensure(TestUser.aliceName)
            let area = try PermissionTestArea()
            defer { area.remove() }
            let setting = try Setting()
            defer { setting.shutDown() }
            // Its manifest declares the five types snapserver publishes; an operator grants it.
            try setting.daemon.control([
                "app", "add",
                try area.writeManifest(
                    [
                        "id": "org.example.snapserver", "name": "Snapcast server",
                        "executables": ["/usr/bin/snapserver"],
                        "NSBonjourServices": [
                            "_snapcast._tcp", "_snapcast-stream._tcp", "_snapcast-jsonrpc._tcp", "_snapcast-tcp._tcp",
                            "_snapcast-http._tcp",
                        ],
                        "NSLocalNetworkUsageDescription": "Snapcast offers its audio streams on the local network.",
                    ], named: "snapserver.json"),
            ]).expectSuccess()
            try setting.daemon.control(["grant", "org.example.snapserver"]).expectSuccess()
            let directory = setting.bus.directory + "/snapserver"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try "".write(toFile: directory + "/snapserver.conf", atomically: true, encoding: .utf8)
            chown(directory, alice.uid, alice.gid)
            let server = try setting.home.spawn(
                try alice.command([
                    "/usr/bin/snapserver", "-c", directory + "/snapserver.conf", "--server.datadir=" + directory,
                    "--server.pidfile=" + directory + "/pid", "--logging.sink=stderr",
                    "--stream.source=pipe://" + directory + "/fifo?name=default", "--stream.port=4704",
                    "--tcp.port=4705", "--http.port=4780",
                ]), environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            defer { server.terminate(grace: 2) }
            // The PTR record of _snapcast._tcp names the instance "Snapcast" (its data is given in hex).
            let instance = "Snapcast".utf8.map { String(format: "%02x", $0) }.joined()
            var found: [LegacyReply] = []
            let deadline = Date(timeIntervalSinceNow: 20)
            repeat {
                found = try setting.peerHost.legacyQuery("_snapcast._tcp.local", type: 12, timeout: 1)
                if found.flatMap(\.answers).contains(where: { $0.type == 12 }) { break }
            } while Date() < deadline
            #expect(
                found.flatMap(\.answers).contains { $0.type == 12 && $0.value.contains(instance) },
                "\(found)\nsnapserver: \(server.output)\nheraldd: \(setting.daemon.log)")
        }

        @Test("avahi-browse -r resolves all of 1,000 services through heraldd, as through avahi-daemon on the same LAN")
        func resolvesAThousand() throws {
            // Within the 1,024 objects one client may hold, in Avahi as in Herald: avahi-browse -r holds a resolver
            // per service found until it resolves. What it costs is measured by `bench.py dbus` (Benchmarks/), not
            // here: the times printed are for the log only.
            let count = 1000
            let setting = try Setting(hosts: 4)
            defer { setting.shutDown() }
            let (avahiHost, publisherHost) = (setting.lan.hosts[2], setting.lan.hosts[3])
            try avahiHost.startAvahi()
            // The services are Avahi static services of a fourth host, written before its avahi-daemon starts.
            let services = publisherHost.directory + "/avahi-services"
            try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
            for index in 0..<count {
                try """
                <?xml version="1.0" standalone='no'?>
                <service-group><name>Bench \(index)</name>
                <service><type>_hdbench._tcp</type><port>\(10_000 + index)</port><txt-record>i=\(index)</txt-record></service>
                </service-group>

                """.write(toFile: services + "/bench-\(index).service", atomically: false, encoding: .utf8)
            }
            try publisherHost.startAvahi()
            /// Runs avahi-browse -r -p -t until it resolves every service (at most 60 s: each daemon has the peer's
            /// announcements cached by then), and gives the time of that run and what it resolved.
            func complete(_ run: () throws -> CommandResult) throws -> (seconds: Double, resolved: Int, runs: Int) {
                let deadline = Date(timeIntervalSinceNow: 60)
                var runs = 0
                while true {
                    let started = Date()
                    let result = try run()
                    let seconds = Date().timeIntervalSince(started)
                    runs += 1
                    let resolved = Set(
                        result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                            .filter { $0.event == .resolved }.map(\.name)
                    ).count
                    print("run \(runs): \(resolved) resolved in \(String(format: "%.2f", seconds)) s")
                    if resolved >= count || Date() > deadline { return (seconds, resolved, runs) }
                }
            }
            let command = ["avahi-browse", "-r", "-p", "-t", "_hdbench._tcp"]
            let herald = try complete { try setting.run(command, timeout: 120) }
            let avahi = try complete { try avahiHost.run(command, timeout: 120) }
            print(
                """
                avahi-browse -r -p -t of \(count) services: through heraldd \(herald.resolved) resolved in \
                \(String(format: "%.2f", herald.seconds)) s (run \(herald.runs)); through avahi-daemon \(avahi.resolved) \
                resolved in \(String(format: "%.2f", avahi.seconds)) s (run \(avahi.runs))
                """)
            #expect(herald.resolved == count, "\(setting.daemon.log.suffix(3000))")
            #expect(avahi.resolved == count)
        }

        @Test("a host rename after a conflict is the server's StateChanged to every client, then the new name")
        func hostRenameIsSignalled() throws {
            let gdbus = try Requirements.requireExecutable("gdbus")
            let setting = try Setting(hosts: 3)
            defer { setting.shutDown() }
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address]
            let monitor = try setting.home.spawn(
                [gdbus, "monitor", "--system", "--dest", "org.freedesktop.Avahi"], environment: environment)
            defer { monitor.terminate(grace: 1) }
            usleep(500_000)
            // A third host claims heraldd's host name for an address of its own.
            let claimer = try setting.lan.hosts[2].startZeroconf(
                script: """
                    info = ServiceInfo(
                        "_hdclaim._tcp.local.", "Claim._hdclaim._tcp.local.", port=4800,
                        server="\(setting.daemon.hostName).local.", parsed_addresses=[HOST_IPV4])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """, ipv6: false)
            try claimer.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            try monitor.waitForOutput(containing: "StateChanged (2,", in: .stdout, timeout: 20)
            #expect(monitor.stdout.contains("/: org.freedesktop.Avahi.Server.StateChanged (1,"), "\(monitor.output)")
            let name = try setting.run([
                gdbus, "call", "--system", "--dest", "org.freedesktop.Avahi", "--object-path", "/", "--method",
                "org.freedesktop.Avahi.Server.GetHostName",
            ])
            #expect(name.stdout.contains("'\(setting.daemon.hostName)-2'"), "\(name)\n\(setting.daemon.log)")
        }

        @Test(
            "avahi-set-host-name: refused to a user, who changes nothing; as root the peer resolves the new name, not the old"
        )
        func setHostName() throws {
            let alice = try TestUser.ensure(TestUser.aliceName)
            let setting = try Setting(hosts: 3)
            defer { setting.shutDown() }
            // A peer with a cache: avahi-daemon, which must hear the old name's goodbye to stop resolving it.
            let avahiHost = setting.lan.hosts[2]
            try avahiHost.startAvahi()
            let old = setting.daemon.hostName
            let new = "renamed-\(UInt16.random(in: 0...UInt16.max))"
            let home = setting.home.ipv4
            /// The IPv4 addresses the peer's legacy query for `name` is answered with.
            func answers(for name: String) throws -> [String] {
                try setting.peerHost.legacyQuery(name + ".local", type: 1).flatMap(\.answers).filter { $0.type == 1 }
                    .map(\.value)
            }
            func hostName() throws -> String {
                try setting.run([
                    "gdbus", "call", "--system", "--dest", "org.freedesktop.Avahi", "--object-path", "/", "--method",
                    "org.freedesktop.Avahi.Server.GetHostNameFqdn",
                ]).stdout
            }
            /// What avahi-daemon on the third host resolves `name` to (nothing once it cannot).
            func resolved(_ name: String) throws -> String {
                try avahiHost.run(["avahi-resolve", "-4", "-n", name + ".local"], timeout: 15).stdout
            }
            /// True once the peer's legacy query for `name` is answered with the Herald host's address.
            func answered(_ name: String) -> Bool {
                waitUntil(timeout: 10) { (try? answers(for: name))?.contains(home) == true }.held
            }
            #expect(answered(old))
            #expect(try resolved(old).contains(home))
            // A user who is no operator is refused, and the name stays.
            let refused = try setting.run(try alice.command(["avahi-set-host-name", new]))
            #expect(!refused.succeeded, "\(refused)")
            #expect(refused.stderr.contains("Not permitted"), "\(refused)")
            #expect(try hostName().contains("'\(old).local'"))
            #expect(try answers(for: new).isEmpty)
            // Root is; every client hears the server register, then run again.
            let monitor = try setting.home.spawn(
                ["gdbus", "monitor", "--system", "--dest", "org.freedesktop.Avahi"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": setting.bus.address])
            defer { monitor.terminate(grace: 1) }
            usleep(500_000)
            let done = try setting.run(["avahi-set-host-name", new])
            #expect(done.succeeded, "\(done)\n\(setting.daemon.log)")
            try monitor.waitForOutput(containing: "StateChanged (2,", in: .stdout, timeout: 10)
            #expect(monitor.stdout.contains("/: org.freedesktop.Avahi.Server.StateChanged (1,"), "\(monitor.output)")
            #expect(try hostName().contains("'\(new).local'"), "\(setting.daemon.log)")
            #expect(setting.daemon.logShows("changed to \(new).local. at the request of uid 0", timeout: 5))
            let status = HeraldJSON.objects(try setting.daemon.control(["status", "--json"]).stdout).first ?? [:]
            #expect(status["hostName"] as? String == "\(new).local.", "\(status)")
            #expect(answered(new), "\(setting.daemon.log)")
            #expect(try answers(for: old).isEmpty)
            #expect(try resolved(new).contains(home))
            #expect(try !resolved(old).contains(home))
        }

        @Test(
            "heraldd serves a bus that starts after it, and again after the bus daemon restarts; clients' groups go with it"
        )
        func busThatComesLaterAndRestarts() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let home = lan.hosts[0]
            let bus = try PrivateBus(on: home, start: false)
            defer { bus.remove() }
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
            let daemon = try home.startHeraldd(launcher: ["env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)"])
            let peer = try lan.hosts[1].startZeroconf(
                script: """
                    info = ServiceInfo(
                        "\(Setting.peerType).local.", "Peer Service.\(Setting.peerType).local.", port=4321,
                        server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """, ipv6: false)
            try peer.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            #expect(daemon.logShows("D-Bus API off: no system bus", timeout: 5), "\(daemon.log)")
            /// True once avahi-browse, through heraldd, lists the peer's service.
            func browses() -> Bool {
                waitUntil(timeout: 15) {
                    let result = try? home.run(
                        ["avahi-browse", "-p", "-t", Setting.peerType], timeout: 10, environment: environment)
                    let entries = (result?.stdout ?? "").split(separator: "\n").compactMap(
                        AvahiBrowseEntry.init(parsableLine:))
                    return entries.contains { $0.event == .added && $0.name == "Peer Service" }
                }.held
            }
            /// The instances of `_hdbuspub._tcp` heraldd answers the peer's legacy query with.
            func published() -> [String] {
                let replies = (try? lan.hosts[1].legacyQuery("_hdbuspub._tcp.local", type: 12)) ?? []
                return replies.flatMap(\.answers).filter { $0.type == 12 }.map(\.value)
            }
            // Several attempts fail before the bus comes: the log says so once.
            usleep(3_500_000)
            try bus.start()
            #expect(daemon.logShows("D-Bus API: serving org.freedesktop.Avahi", timeout: 15), "\(daemon.log)")
            #expect(browses(), "\(daemon.log)")
            let publisher = try home.spawn(
                ["avahi-publish", "-s", "Bus Pub", "_hdbuspub._tcp", "4700"], environment: environment)
            defer { publisher.terminate(grace: 1) }
            try publisher.waitForOutput(containing: "Established", timeout: 15)
            #expect(waitUntil(timeout: 10) { !published().isEmpty }.held)
            // The bus daemon dies: the client's group is withdrawn as if it had left, and the bus is tried again.
            bus.kill()
            #expect(daemon.logShows("the system bus connection broke, 1 clients dropped", timeout: 10), "\(daemon.log)")
            #expect(waitUntil(timeout: 10) { published().isEmpty }.held, "\(daemon.log)")
            usleep(3_500_000)
            try bus.start()
            #expect(
                waitUntil(timeout: 15) { daemon.log.components(separatedBy: "D-Bus API: serving").count == 3 }.held,
                "\(daemon.log)")
            #expect(browses(), "\(daemon.log)")
            // One line per change, not one per attempt.
            #expect(daemon.log.components(separatedBy: "D-Bus API off").count == 3, "\(daemon.log)")
        }

        @Test("a service seen over IPv4 and IPv6 is listed and resolved once per protocol, as avahi-daemon does")
        func resultsPerProtocol() throws {
            let setting = try Setting(hosts: 4)
            defer { setting.shutDown() }
            let dual = try setting.lan.hosts[2].startZeroconf(
                script: """
                    info = ServiceInfo(
                        "_hdual._tcp.local.", "Dual Service._hdual._tcp.local.", port=4322,
                        server=HOST_NAME + ".local.", parsed_addresses=[HOST_IPV4, HOST_IPV6])
                    zc.register_service(info)
                    ready("registered")
                    wait_forever()
                    """)
            try dual.waitForOutput(containing: "registered", in: .stdout, timeout: 15)
            let avahiHost = setting.lan.hosts[3]
            try avahiHost.startAvahi()
            /// The (event, protocol) pairs `avahi-browse -r` printed for the dual-stack service.
            func pairs(_ run: () throws -> CommandResult) -> Set<String> {
                var seen: Set<String> = []
                _ = waitUntil(timeout: 15) {
                    guard let result = try? run() else { return false }
                    let entries = result.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
                    seen = Set(
                        entries.filter { $0.name == "Dual Service" }.map {
                            "\($0.event.rawValue) \($0.networkProtocol)"
                        })
                    return seen.count == 4
                }
                return seen
            }
            let herald = pairs { try setting.run(["avahi-browse", "-r", "-p", "-t", "_hdual._tcp"]) }
            let avahi = pairs { try avahiHost.run(["avahi-browse", "-r", "-p", "-t", "_hdual._tcp"]) }
            #expect(avahi == ["+ IPv4", "+ IPv6", "= IPv4", "= IPv6"])
            #expect(herald == avahi, "\(setting.daemon.log)")
        }

        @Test("an unregistered user gets NotPermitted and nothing else; the same tools work for root, no manifest")
        func unregisteredUserIsRefused() throws {
            let alice = try TestUser.ensure(TestUser.aliceName)
            let setting = try Setting()
            defer { setting.shutDown() }
            let refused = try setting.run(try alice.command(["avahi-browse", "-r", "-p", "-t", Setting.peerType]))
            #expect(refused.stderr.contains("Not permitted"), "\(refused)")
            #expect(refused.stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:)).isEmpty)
            let publish = try setting.run(
                try alice.command(["avahi-publish", "-s", "Alice Pub", "_hdpub._tcp", "4556"]), timeout: 5)
            #expect(!publish.stdout.contains("Established"), "\(publish)")
            #expect(publish.stderr.contains("Not permitted"), "\(publish)\n\(setting.daemon.log)")
            // Root, an operator, needs no manifest.
            let root = try setting.run(["avahi-browse", "-p", "-t", Setting.peerType])
            #expect(root.succeeded, "\(root)")
        }
    }
}
