import Foundation
import Testing

extension HeraldOnTestLANs {
    /// The Tic Tac Toe example (Examples/TicTacToe) on two hosts, each with its own heraldd: each player
    /// advertises itself and finds the other, never itself.
    @Suite("The Tic Tac Toe example finds its peers", .serialized)
    struct TicTacToeExampleTests {
        init() throws {
            try Requirements.check()
            _ = try KitBinaries.tictactoe()
        }

        @Test("two players in two namespaces each see the other, not themselves, and see a player leave")
        func twoPlayersSeeEachOther() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let (alphaHost, betaHost) = (lan.hosts[0], lan.hosts[1])
            let alphaDaemon = try alphaHost.startHeraldd()
            let betaDaemon = try betaHost.startHeraldd()
            let tictactoe = try KitBinaries.tictactoe()
            // Alpha plays for 10 s; Beta leaves as soon as it has seen Alpha (its service then says goodbye).
            let alpha = try alphaHost.spawn(
                [tictactoe, "--name", "Alpha", "--seconds", "10", "--json"],
                environment: ["DNSSD_UDS_PATH": alphaDaemon.socket])
            let beta = try betaHost.spawn([
                tictactoe, "--name", "Beta", "--exit-after-first-peer", "--seconds", "20",
                "--socket", betaDaemon.socket,
            ])
            let betaStatus = beta.waitForExit(timeout: 30)
            let alphaStatus = alpha.waitForExit(timeout: 30)
            #expect(alphaStatus == 0, "alpha: \(alpha.output)\nheraldd:\n\(alphaDaemon.log)")
            #expect(betaStatus == 0, "beta: \(beta.output)\nheraldd:\n\(betaDaemon.log)")

            print("tictactoe Beta (text):\n\(beta.stdout)\ntictactoe Alpha (--json):\n\(alpha.stdout)")
            // JSON: advertised under its own name, found Beta on its interface, saw Beta leave, never listed itself.
            let events = alpha.jsonLines
            #expect(
                events.contains { $0["event"] as? String == "advertising" && $0["name"] as? String == "Alpha" },
                "\(alpha.stdout)")
            #expect(
                events.contains {
                    $0["event"] as? String == "player-found" && $0["name"] as? String == "Beta"
                        && $0["interface"] as? String == alphaHost.interface
                }, "\(alpha.stdout)")
            #expect(
                events.contains { $0["event"] as? String == "player-gone" && $0["name"] as? String == "Beta" },
                "\(alpha.stdout)")
            #expect(
                !events.contains { $0["name"] as? String == "Alpha" && $0["event"] as? String == "player-found" },
                "\(alpha.stdout)")
            // Text: the same for people.
            #expect(beta.stdout.contains("advertising \"Beta\" (_tictactoe._tcp) on port "), "\(beta.stdout)")
            #expect(beta.stdout.contains("+ player \"Alpha\" on \(betaHost.interface)"), "\(beta.stdout)")
            #expect(!beta.stdout.contains("+ player \"Beta\""), "\(beta.stdout)")
        }

        @Test(
            "while parked it says it is waiting for permission, and once granted it advertises and lists the player it finds"
        )
        func waitsForPermission() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let (host, peer) = (lan.hosts[0], lan.hosts[1])
            let daemon = try host.startPermissionDaemon(area: area)
            let game = area.directory + "/bin/tictactoe"
            try FileManager.default.copyItem(atPath: try KitBinaries.tictactoe(), toPath: game)
            try daemon.control(["app", "add", try area.ticTacToeManifest(executable: game)]).expectSuccess()
            // The other player: a game Avahi publishes in another namespace.
            _ = try peer.startAvahi()
            let remote = try peer.spawn(["avahi-publish", "-s", "Remote Player", "_tictactoe._tcp", "5000"])
            defer { remote.terminate(grace: 1) }
            try remote.waitForOutput(containing: "Established under name", timeout: 15)

            let player = try host.spawn(
                try AppUser.command([game, "--name", "Alpha", "--seconds", "6"]),
                environment: ["DNSSD_UDS_PATH": daemon.socket])
            try player.waitForOutput(containing: "waiting for permission: ", in: .stdout, timeout: 10)
            usleep(500_000)
            try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
            #expect(player.waitForExit(timeout: 25) == 0, "\(player.output)\n\(daemon.log.suffix(2000))")
            let lines = player.stdout.split(separator: "\n").map(String.init)
            let waiting = lines.filter { $0.hasPrefix("waiting for permission: ") }
            #expect(
                waiting.contains { $0.hasSuffix("(advertising)") }
                    && waiting.contains { $0.hasSuffix("(looking for players)") },
                "\(player.stdout)")
            let firstWaiting = lines.firstIndex { $0.hasPrefix("waiting for permission: ") }
            let advertising = lines.firstIndex { $0.hasPrefix("advertising \"Alpha\"") }
            let found = lines.firstIndex { $0.hasPrefix("+ player \"Remote Player\" on ") }
            #expect(firstWaiting != nil && advertising != nil && found != nil, "\(player.stdout)")
            print("tictactoe, parked then granted:\n\(player.stdout)")
            if let firstWaiting, let advertising, let found {
                #expect(
                    firstWaiting < advertising && firstWaiting < found, "results only after the grant: \(player.stdout)"
                )
            }
        }

        @Test("alone on the network, --exit-after-first-peer gives up after --seconds with status 1")
        func nobodyToPlayWith() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            let alone = try lan.hosts[0].spawn(
                [try KitBinaries.tictactoe(), "--name", "Solo", "--exit-after-first-peer", "--seconds", "3"],
                environment: ["DNSSD_UDS_PATH": daemon.socket])
            #expect(alone.waitForExit(timeout: 15) == 1, "\(alone.output)")
            #expect(alone.stdout.contains("advertising \"Solo\""), "\(alone.output)")
            #expect(!alone.stdout.contains("+ player"), "\(alone.output)")
        }
    }
}
