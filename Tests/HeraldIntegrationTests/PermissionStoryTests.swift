import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The tic-tac-toe story (docs/scenarios.md, "The tic-tac-toe story"), end to end: a real heraldd with a real
/// store, an app (a copy of the `herald` tool at the path its manifest names, run as an unprivileged user), an
/// operator using `herald`, and a peer on another host of the test LAN.
@Suite("The tic-tac-toe story", .serialized)
struct PermissionStoryTests {
    @Test("NoAuth for each static rule, parked until granted, results without a restart, withdrawn on deny")
    func ticTacToeStory() throws {
        let story = try StoryLAN()
        defer { story.shutdown() }
        let (area, home, daemon, peer) = (story.area, story.home, story.daemon, story.peer)
        let app = try area.installApp(named: "tictactoe")

        // 1. Registered without a usage description: refused at once, no-usage-description.
        let bare = try daemon.control(["app", "add", try area.ticTacToeManifest(executable: app, usage: nil)])
        #expect(bare.status == 0, "\(bare)")
        #expect(
            bare.stderr.contains(": warning: NSLocalNetworkUsageDescription"),
            "a manifest without a usage description is accepted with a warning: \(bare)")
        #expect(!bare.stderr.contains("warning: warning:"), "the warning says so once: \(bare)")
        let noUsage = try home.runApp(app, ["browse", "_tictactoe._tcp", "--timeout", "5"], daemon: daemon)
        #expect(noUsage.status == 77, "\(noUsage)")
        #expect(noUsage.stderr.contains("not permitted (NoAuth -65555, no-usage-description)"), "\(noUsage)")

        // 2. With the description, but browsing a type it did not declare: undeclared-type.
        let described = try daemon.control(["app", "add", try area.ticTacToeManifest(executable: app)])
        #expect(described.status == 0 && described.stdout.contains("updated"), "\(described)")
        let other = try home.runApp(app, ["browse", "_other._tcp", "--timeout", "5"], daemon: daemon)
        #expect(other.status == 77, "\(other)")
        #expect(other.stderr.contains("not permitted (NoAuth -65555, undeclared-type)"), "\(other)")

        // 3. Declared, not yet granted: parked, and the operator sees the pending request.
        let browse = try home.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        try browse.waitForOutput(containing: "waiting for permission: browse _tictactoe._tcp", in: .stderr, timeout: 10)
        #expect(browse.stderr.contains("not-determined"), "\(browse.stderr)")
        let game = try home.spawnApp(app, ["register", "Home Game", "_tictactoe._tcp", "4000"], daemon: daemon)
        try game.waitForOutput(containing: "waiting for permission", in: .stderr, timeout: 10)
        let requests = try daemon.control(["requests"])
        #expect(requests.status == 0, "\(requests)")
        #expect(requests.stdout.contains("org.example.tictactoe"), "\(requests)")
        #expect(requests.stdout.contains("Tic Tac Toe looks for players on your local network."), "\(requests)")
        #expect(requests.stdout.contains("_tictactoe._tcp"), "\(requests)")
        #expect(browse.stdout.isEmpty, "nothing is delivered while parked: \(browse.stdout)")

        // 4. Granted: the same running app sees the peer within a second, and the peer sees its game.
        let granted = Date()
        let grant = try daemon.control(["grant", "org.example.tictactoe"])
        #expect(grant.status == 0 && grant.stdout.contains("granted (was not-determined)"), "\(grant)")
        try browse.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 5)
        let delay = Date().timeIntervalSince(granted)
        #expect(delay < 1.0, "results reached the app \(delay) s after the grant")
        try game.waitForOutput(containing: "Home Game", in: .stdout, timeout: 10)
        let seen = try peer.herald(["browse", "_tictactoe._tcp", "--timeout", "4"])
        #expect(seen.stdout.contains("Home Game"), "the peer sees the app's game: \(seen)")

        // 5. Denied: the browse reports NoAuth again, and the peer sees the game go away (goodbye) within 2 s.
        let watcher = try peer.spawnHerald(["browse", "_tictactoe._tcp"])
        try watcher.waitForOutput(containing: "Home Game", in: .stdout, timeout: 5)
        let impatient = try home.spawnApp(
            app, ["register", "Quick Game", "_tictactoe._tcp", "4001", "--no-wait"], daemon: daemon)
        try impatient.waitForOutput(containing: "Quick Game", in: .stdout, timeout: 10)
        let denied = Date()
        let deny = try daemon.control(["deny", "org.example.tictactoe"])
        #expect(deny.status == 0 && deny.stdout.contains("denied (was granted)"), "\(deny)")
        try browse.waitForOutput(containing: "denied", in: .stderr, timeout: 5)
        let gone = waitUntil(timeout: 5) {
            watcher.stdout.contains("- ")
                && watcher.stdout.split(separator: "\n").contains { $0.contains("Home Game") && $0.contains(" - ") }
        }
        #expect(gone.held, "the peer did not see the game withdrawn: \(watcher.stdout)")
        #expect(Date().timeIntervalSince(denied) < 2.0, "withdrawn \(Date().timeIntervalSince(denied)) s after deny")
        // The app's own browse shows what it found as gone (it no longer knows), and its register says its
        // game was withdrawn, while they run, not only when they exit.
        let forgotten = waitUntil(timeout: 5) {
            browse.stdout.split(separator: "\n").contains { $0.contains("Peer Game") && $0.contains("  -  ") }
        }
        #expect(forgotten.held, "herald browse did not show the peer's game removed: \(browse.output)")
        let told = waitUntil(timeout: 5) {
            game.stdout.split(separator: "\n").contains { $0.contains("Home Game") && $0.contains("  -  ") }
        }
        #expect(told.held, "herald register did not show its game withdrawn: \(game.output)")
        // Its message follows the - line (it asks the daemon why first).
        #expect((try? game.waitForOutput(containing: "denied", in: .stderr, timeout: 5)) != nil, "\(game.stderr)")
        // With --no-wait the command ends at once, 77, after saying its game was withdrawn.
        #expect(impatient.waitForExit(timeout: 5) == 77, "\(impatient.output)")
        #expect(
            impatient.stdout.split(separator: "\n").contains { $0.contains("Quick Game") && $0.contains("  -  ") },
            "\(impatient.output)")
        // Stopped now, the app's browse says it was denied, not that it still waits for a decision.
        browse.send(SIGINT)
        #expect(browse.waitForExit(timeout: 5) == 77, "\(browse.output)")
        #expect(browse.stderr.contains("(NoAuth -65555, denied): denied by an operator: "), "\(browse.stderr)")

        // The audit trail tells the story.
        let log = try daemon.control(["log", "--lines", "100"])
        for expected in [
            "refuse (no-usage-description)", "refuse (undeclared-type)", "park (not-determined)",
            "grant", "deny",
        ] {
            #expect(log.stdout.contains(expected), "audit log lacks \(expected): \(log.stdout)")
        }
        for process in [browse, game, watcher] { process.terminate(grace: 1) }
    }

    @Test(
        "a parked browse granted while another browse of its type runs is told at once; denied, it leaves the other running"
    )
    func parkedBrowseJoinsAndLeavesRunningOnes() throws {
        let story = try StoryLAN()
        defer { story.shutdown() }
        let (home, daemon, peer) = (story.home, story.daemon, story.peer)
        let app = try story.area.registerTicTacToe(on: daemon)

        // An operator's browse of the type runs and has found the peer's game.
        let operatorBrowse = try daemon.spawnHerald(["browse", "_tictactoe._tcp"])
        defer { operatorBrowse.terminate(grace: 1) }
        try operatorBrowse.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 10)

        // The app's browse of the same type waits for permission, then joins the running one on the grant: told
        // at once of the game found long before (no new packet announces it).
        let browse = try home.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        defer { browse.terminate(grace: 1) }
        try browse.waitForOutput(containing: "waiting for permission", in: .stderr, timeout: 10)
        #expect(!browse.stdout.contains("Peer Game"), "nothing is delivered while parked: \(browse.stdout)")
        try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
        try browse.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 3)

        // Denied, the app's browse stops; the operator's goes on and sees the next game.
        try daemon.control(["deny", "org.example.tictactoe"]).expectSuccess()
        try browse.waitForOutput(containing: "denied", in: .stderr, timeout: 5)
        let secondGame = try peer.spawnHerald(["register", "Second Game", "_tictactoe._tcp", "5001"])
        defer { secondGame.terminate(grace: 1) }
        try operatorBrowse.waitForOutput(containing: "Second Game", in: .stdout, timeout: 10)
        #expect(!browse.stdout.contains("Second Game"), "a denied browse got results: \(browse.stdout)")
    }

    @Test(
        "what an app changes in its registrations while parked or running is what a grant publishes: the last TXT and record data, at most 100 added records"
    )
    func changesSurviveParkingAndDenial() throws {
        let story = try StoryLAN()
        defer { story.shutdown() }
        let (area, home, daemon, peer) = (story.area, story.home, story.daemon, story.peer)
        let python = try area.installPython(named: "updater")
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.updater", "name": "Updater", "executables": [python],
                    "NSBonjourServices": ["_hupdate._tcp"],
                    "NSLocalNetworkUsageDescription": "Updater publishes its state.",
                ], named: "updater.json"),
        ]).expectSuccess()
        let app = try home.spawn(try AppUser.command([python, "-c", DNSSDByHand.python + Self.updater, daemon.socket]))
        defer { app.terminate(grace: 1) }
        // Parked, it changes its TXT record 100,000 times, and its record once.
        try app.waitForOutput(containing: "parked updates sent", in: .stdout, timeout: 30)
        #expect(app.stdout.contains("register record: 0"), "\(app.output)")
        func peerSees(_ text: String) -> Bool {
            let resolved = try? peer.herald(["resolve", "Updater", "_hupdate._tcp", "--timeout", "5"])
            return resolved?.stdout.contains(text) ?? false
        }
        try daemon.control(["grant", "org.example.updater"]).expectSuccess()
        try app.waitForOutput(containing: "running update sent", in: .stdout, timeout: 10)
        #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
        #expect(waitUntil(timeout: 10) { peerSees("state=running") }.held, "\(app.output)\n\(daemon.log)")
        // A hundred records added to the registration are taken, the next is refused with NoMemory.
        try app.waitForOutput(containing: "added 100 records, the next: -65539", in: .stdout, timeout: 10)
        // Denied and granted again, the registration comes back as the app last set it.
        try daemon.control(["deny", "org.example.updater"]).expectSuccess()
        try app.waitForOutput(containing: "withdrawn", in: .stdout, timeout: 10)
        try daemon.control(["grant", "org.example.updater"]).expectSuccess()
        try app.waitForOutput(containing: "registered again", in: .stdout, timeout: 10)
        #expect(waitUntil(timeout: 10) { peerSees("state=running") }.held, "\(app.output)\n\(daemon.log)")
        // The record registered by itself too ("r=running" in RFC 3597's generic form).
        let record = try peer.herald(["query", "Record._hupdate._tcp.local.", "TYPE10", "--timeout", "3"])
        #expect(record.stdout.contains("\\# 9 723d72756e6e696e67") && !record.stdout.contains("\\# 3 "), "\(record)")
        let added = try peer.herald(["query", "Updater._hupdate._tcp.local.", "TYPE10", "--timeout", "3"])
        #expect(added.stdout.split(separator: "\n").count(where: { $0.contains("Updater") }) == 100, "\(added)")
        #expect(daemon.process.isRunning, "heraldd died:\n\(daemon.log)")
    }

    /// A script playing an app: registers `Updater` and a record `Record` of its own (both parked until granted),
    /// updates the TXT record 100,000 times and the record once while parked; once registered, sets them to
    /// state=running and r=running and adds 101 NULL records to the registration; then reports its replies.
    static let updater = #"""
        import os
        s = connect()
        def cstr(text):
            return text.encode() + b"\0"
        txt = b"\x07state=0"
        body = struct.pack(">II", 0, 0) + cstr("Updater") + cstr("_hupdate._tcp") + cstr("") + cstr("") \
            + struct.pack(">HH", 4700, len(txt)) + txt
        request(s, 5, b"ctx-upd8", body)
        expect_status(s)
        def with_status(op, context, reg_index, body):
            # On the shared connection a request's status comes back on a socket passed with its last byte.
            ours, theirs = socket.socketpair()
            frame = struct.pack(">IIII8sI", 1, len(body) + 1, 0, op, context, reg_index) + b"\0" + body
            s.sendall(frame[:-1])
            socket.send_fds(s, [frame[-1:]], [theirs.fileno()])
            theirs.close()
            ours.settimeout(10)
            return struct.unpack(">i", exactly(ours, 4))[0]
        def update(context, reg_index, rdata):
            # No error socket: a status only if it fails.
            body = struct.pack(">IH", 0, len(rdata)) + rdata + struct.pack(">I", 0)
            return struct.pack(">IIII8sI", 1, len(body), 4, 11, context, reg_index) + body
        def update_txt(state):
            entry = ("state=" + state).encode()
            return update(b"ctx-upd8", 0xFFFFFFFF, bytes([len(entry)]) + entry)
        # A record registered by itself (NULL, unique), parked too.
        record = struct.pack(">II", 0x20, 0) + cstr("Record._hupdate._tcp.local.") + struct.pack(">HHH", 10, 1, 3) \
            + b"r=0" + struct.pack(">I", 120)
        print("register record: %d" % with_status(2, b"ctx-rec1", 7, record), flush=True)
        s.sendall(b"".join(update_txt(str(n)) for n in range(1, 100001)) + update(b"ctx-rec1", 7, b"r=1"))
        print("parked updates sent", flush=True)
        registrations = 0
        s.settimeout(60)
        while True:
            header = exactly(s, 28)
            version, length, flags, op = struct.unpack(">IIII", header[:16])
            reply = exactly(s, length)
            reply_flags, interface, error = struct.unpack(">IIi", reply[:12])
            if op != 65:
                continue
            if error == -65555 and registrations > 0:
                print("withdrawn", flush=True)
            elif error == 0 and reply_flags & 2:
                registrations += 1
                if registrations == 1:
                    s.sendall(update_txt("running") + update(b"ctx-rec1", 7, b"r=running"))
                    print("running update sent", flush=True)
                    statuses = [with_status(10, b"ctx-upd8", 1000 + n, struct.pack(">IHH", 0, 10, 4) + struct.pack(">I", n)
                                            + struct.pack(">I", 120)) for n in range(101)]
                    print("added %d records, the next: %d" % (statuses[:100].count(0), statuses[100]), flush=True)
                else:
                    print("registered again", flush=True)
        """#
}

extension PermissionStoryTests {
    @Test("a deny takes back the service types herald browse --all listed, while the command runs")
    func denyTakesBackServiceTypes() throws {
        let story = try StoryLAN()
        defer { story.shutdown() }
        let (area, home, daemon) = (story.area, story.home, story.daemon)
        let scanner = try area.installApp(named: "scanner")
        let manifest = try area.writeManifest(
            [
                "id": "org.example.scanner", "name": "Scanner", "executables": [scanner],
                "NSBonjourServices": ["_tictactoe._tcp"],
                "NSLocalNetworkUsageDescription": "Scanner lists what is on your network.",
                "entitlements": ["com.apple.developer.networking.multicast"],
            ],
            named: "scanner.json")
        try daemon.control(["app", "add", manifest]).expectSuccess()
        try daemon.control(["grant", "org.example.scanner"]).expectSuccess()
        let all = try home.spawnApp(scanner, ["browse", "--all"], daemon: daemon)
        defer { all.terminate(grace: 1) }
        try all.waitForOutput(containing: "_tictactoe._tcp", in: .stdout, timeout: 10)
        try daemon.control(["deny", "org.example.scanner"]).expectSuccess()
        let gone = waitUntil(timeout: 5) {
            all.stdout.split(separator: "\n").contains { $0.contains("_tictactoe._tcp") && $0.contains("  -  ") }
        }
        #expect(gone.held, "herald browse --all did not show the type gone: \(all.output)")
        #expect((try? all.waitForOutput(containing: "denied", in: .stderr, timeout: 5)) != nil, "\(all.stderr)")
    }
}

/// Two hosts of a test LAN: on the first, heraldd checking permissions with a store and apps directory of its
/// own; on the second, a peer heraldd where a player (its herald runs as root: an operator) advertises a game,
/// "Peer Game".
final class StoryLAN {
    let lan: TestLAN
    let area: PermissionTestArea
    let home: TestLAN.Host
    let daemon: HeraldDaemon
    let peer: HeraldDaemon
    let peerGame: RunningProcess

    init() throws {
        let lan = try TestLAN(hosts: 2)
        let area: PermissionTestArea
        do {
            area = try PermissionTestArea()
        } catch {
            lan.shutdown()
            throw error
        }
        do {
            daemon = try lan.hosts[0].startPermissionDaemon(area: area)
            peer = try lan.hosts[1].startHeraldd()
            peerGame = try peer.spawnHerald(["register", "Peer Game", "_tictactoe._tcp", "5000"])
            try peerGame.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 10)
        } catch {
            lan.shutdown()
            area.remove()
            throw error
        }
        self.lan = lan
        self.area = area
        home = lan.hosts[0]
    }

    func shutdown() {
        peerGame.terminate(grace: 1)
        lan.shutdown()
        area.remove()
    }
}
