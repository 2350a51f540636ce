import Foundation
import Testing

/// barrier (Debian's keyboard-and-mouse sharing tool, built against dns_sd.h) advertises `_barrierServerZeroconf._tcp`
/// and browses for it: 21 characters, more than RFC 6335 registers, which Avahi and mDNSResponder accept. Its GUI is
/// run on a virtual X display (Xvfb) with Herald's libdns_sd.so.1 on the loader path, unchanged (issue 29).
extension HeraldOnTestLANs {
    @Suite("barrier finds its peer through Herald", .serialized)
    struct BarrierInteropTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.directory()
        }

        /// barrier's settings: auto configuration on, first-run wizard and prompts already done, server or client.
        static func settings(server: Bool, screen: String) -> String {
            """
            [General]
            wizardLastRun=99
            startedBefore=true
            autoConfig=true
            autoConfigPrompted=true
            groupServerChecked=\(server)
            groupClientChecked=\(!server)
            screenName=\(screen)
            cryptoEnabled=false

            """
        }

        /// Starts Xvfb on a free display and barrier's GUI on it, as `screen`, with `daemon`'s socket and Herald's
        /// library; barrier's own settings live in a home directory of its own.
        static func startBarrier(on host: TestLAN.Host, daemon: HeraldDaemon, server: Bool, screen: String) throws
            -> RunningProcess
        {
            var missing: [Requirements.Item] = []
            if Requirements.executable("barrier") == nil {
                missing.append(.init(what: "`barrier` not found", package: "barrier"))
            }
            if Requirements.executable("Xvfb") == nil {
                missing.append(.init(what: "`Xvfb` not found", package: "xvfb"))
            }
            if !missing.isEmpty { throw Requirements.Missing(items: missing) }
            let display =
                (100..<1000).shuffled().first {
                    !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                        && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
                } ?? 999
            let xvfb = try host.spawn(["Xvfb", ":\(display)", "-nolisten", "tcp", "-screen", "0", "800x600x24"])
            guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(display)") }).held
            else {
                throw HarnessError.setup("Xvfb :\(display) did not start: \(xvfb.output)")
            }
            let home = host.directory + "/barrier-\(screen)"
            try FileManager.default.createDirectory(
                atPath: home + "/.config/Debauchee", withIntermediateDirectories: true)
            try settings(server: server, screen: screen).write(
                toFile: home + "/.config/Debauchee/Barrier.conf",
                atomically: true, encoding: .utf8)
            var environment = try LibDNSSDPrograms.environment(socket: daemon.socket)
            environment["HOME"] = home
            environment["DISPLAY"] = ":\(display)"
            environment["XDG_RUNTIME_DIR"] = home
            return try host.spawn(["barrier"], environment: environment)
        }

        @Test(
            "barrier's server advertises _barrierServerZeroconf._tcp through Herald's libdns_sd, and barrier's client on another host finds it"
        )
        func barrierServerAndClient() throws {
            let herald = try LibDNSSDPrograms.libraryDirectory() + "/libdns_sd.so.1"
            let barrier = try #require(
                Requirements.executable("barrier"), "barrier is not installed (apt-get install barrier)")
            #expect(try LibDNSSDPrograms.loadedLibrary(of: barrier) == herald, "barrier must load Herald's library")

            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (serverHost, clientHost) = (lan.hosts[0], lan.hosts[1])
            let serverDaemon = try serverHost.startHeraldd()
            let clientDaemon = try clientHost.startHeraldd()
            _ = try Self.startBarrier(on: serverHost, daemon: serverDaemon, server: true, screen: "deskserver")
            // The server advertises itself under its IPv4 address (the name barrier's clients connect to).
            #expect(
                serverDaemon.logShows(
                    "registered \(serverHost.ipv4.replacingOccurrences(of: ".", with: "\\."))._barrierServerZeroconf._tcp.local.",
                    timeout: 40), "\(serverDaemon.log)")
            _ = try Self.startBarrier(on: clientHost, daemon: clientDaemon, server: false, screen: "deskclient")
            // barrier's client advertises its own screen only once its browse found a server (ZeroconfService::serverDetected).
            #expect(
                clientDaemon.logShows("registered deskclient._barrierClientZeroconf._tcp.local.", timeout: 40),
                "the client never found the server:\n\(clientDaemon.log)")
            // And the server host sees the client's service too.
            let browse = try serverDaemon.herald(["browse", "_barrierClientZeroconf._tcp", "--timeout", "5", "--json"])
            #expect(HeraldJSON.objects(browse.stdout).contains { $0["name"] as? String == "deskclient" }, "\(browse)")
            #expect(
                !serverDaemon.log.contains("refused") && !clientDaemon.log.contains("refused"),
                "\(serverDaemon.log)\n\(clientDaemon.log)")
        }

        @Test(
            "an app whose manifest declares _barrierServerZeroconf._tcp is registered, granted, and advertises and browses it with herald"
        )
        func manifestDeclaringTheType() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (host, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try host.startPermissionDaemon(area: area)
            let peerDaemon = try peer.startHeraldd()
            let app = try area.installApp(named: "barrier")
            let manifest = try area.writeManifest(
                [
                    "id": "org.debian.barrier", "name": "Barrier", "executables": [app],
                    "NSBonjourServices": ["_barrierServerZeroconf._tcp", "_barrierClientZeroconf._tcp"],
                    "NSLocalNetworkUsageDescription":
                        "Barrier finds the computers it shares a keyboard and mouse with.",
                ], named: "barrier.json")
            let added = try daemon.control(["app", "add", manifest])
            #expect(added.status == 0, "\(added)")
            #expect(added.stderr.contains("21 characters"), "the warning names the rule: \(added)")
            try daemon.control(["grant", "org.debian.barrier"]).expectSuccess()

            let server = try host.spawnApp(
                app, ["register", "Desk", "_barrierServerZeroconf._tcp", "24800"], daemon: daemon)
            defer { server.terminate(grace: 1) }
            try server.waitForOutput(containing: "Desk", in: .stdout, timeout: 15)
            let client = try peerDaemon.spawnHerald(["register", "Laptop", "_barrierClientZeroconf._tcp", "24801"])
            defer { client.terminate(grace: 1) }
            try client.waitForOutput(containing: "Laptop", in: .stdout, timeout: 15)

            let found = try peerDaemon.herald([
                "browse", "_barrierServerZeroconf._tcp", "--resolve", "--timeout", "5", "--json",
            ])
            #expect(
                HeraldJSON.objects(found.stdout).contains {
                    $0["name"] as? String == "Desk" && $0["port"] as? Int == 24800
                },
                "\(found)\n\(daemon.log)")
            let seen = try host.runApp(
                app, ["browse", "_barrierClientZeroconf._tcp", "--timeout", "5", "--json"], daemon: daemon)
            #expect(
                HeraldJSON.objects(seen.stdout).contains { $0["name"] as? String == "Laptop" }, "\(seen)\n\(daemon.log)"
            )
        }
    }
}
