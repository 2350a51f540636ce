import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An ordinary local user against heraldd as its unit runs it (its own user, CAP_SYS_PTRACE only), on a test LAN
/// whose other host advertises a game with a secret in its TXT record. The tic-tac-toe app is registered and
/// **granted**, and runnable by every user: each test is an attack that used to get its permission, and checks that
/// the attacker now gets nothing (no names, no TXT, nothing advertised), while the app itself still works.
@Suite("A hostile local user", .serialized)
struct HostileUserTests {
    /// The test LAN, the confined daemon, the granted app, the peer's secret game, and the users.
    final class Setting {
        let lan: TestLAN
        let area: PermissionTestArea
        let confined: ConfinedDaemon
        var daemon: HeraldDaemon { confined.daemon }
        let peer: HeraldDaemon
        let peerGame: RunningProcess
        let app: String
        let tools: AttackerTools
        let alice: TestUser
        let bob: TestUser

        init() throws {
            let daemonUser = try TestUser.ensure(TestUser.daemonName)
            alice = try TestUser.ensure(TestUser.aliceName)
            bob = try TestUser.ensure(TestUser.bobName)
            lan = try TestLAN(hosts: 2)
            do {
                area = try PermissionTestArea()
            } catch {
                lan.shutdown()
                throw error
            }
            do {
                confined = try ConfinedDaemon.start(on: lan.hosts[0], area: area, user: daemonUser)
                peer = try lan.hosts[1].startHeraldd()
                peerGame = try peer.spawnHerald([
                    "register", "Peer Game", "_tictactoe._tcp", "5000", "secret=peer-txt-4242",
                ])
                try peerGame.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 10)
                app = try area.installApp(named: "tictactoe")
                try confined.daemon.control(["app", "add", try area.ticTacToeManifest(executable: app)]).expectSuccess()
                try confined.daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
                tools = try AttackerTools(in: area, host: lan.hosts[0])
            } catch {
                lan.shutdown()
                area.remove()
                throw error
            }
        }

        var home: TestLAN.Host { lan.hosts[0] }

        /// Registers the attacker's probe itself as an app declaring `_tictactoe._tcp`, granted or not yet decided.
        func registerAttackerApp(granted: Bool) throws {
            try daemon.control([
                "app", "add",
                try area.writeManifest(
                    [
                        "id": "org.example.attacker", "name": "Attacker", "executables": [tools.attacker],
                        "NSBonjourServices": ["_tictactoe._tcp"], "NSLocalNetworkUsageDescription": "Plays.",
                    ],
                    named: "attacker.json"),
            ]).expectSuccess()
            if granted { try daemon.control(["grant", "org.example.attacker"]).expectSuccess() }
        }

        /// Runs `argv` as `user` on the daemon's host.
        func run(as user: TestUser, _ argv: [String], timeout: TimeInterval = 20, environment: [String: String] = [:])
            throws -> CommandResult
        {
            try home.run(try user.command(argv), timeout: timeout, environment: environment)
        }

        /// What the peer host sees of `type` for three seconds.
        func peerBrowse(_ type: String = "_tictactoe._tcp") throws -> String {
            try peer.herald(["browse", type, "--timeout", "3"]).stdout
        }

        /// The granted app, run by `user`, still finds the peer's game.
        func expectAppWorks(as user: TestUser, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let browse = try run(
                as: user, [app, "browse", "_tictactoe._tcp", "--timeout", "3", "--socket", daemon.socket])
            #expect(
                browse.stdout.contains("Peer Game"), "the granted app itself still works: \(browse)",
                sourceLocation: sourceLocation)
        }

        /// Nothing the attacker printed carries the peer's names or TXT.
        func expectNothingLeaked(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) {
            let output = result.stdout + result.stderr
            #expect(
                !output.contains("Peer Game") && !output.contains("peer-txt-4242"), "leaked: \(result)",
                sourceLocation: sourceLocation)
        }

        func shutdown() {
            peerGame.terminate(grace: 1)
            lan.shutdown()
            area.remove()
        }
    }

    @Test("a connection whose process then execs the granted app, and a child that asks on it, get nothing")
    func borrowedConnection() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let attack = try setting.run(
            as: setting.alice,
            [
                setting.tools.attacker, "borrow", setting.daemon.socket,
                setting.app, "_tictactoe._tcp", "Peer Game",
            ])
        #expect(attack.stdout.contains("browse: status -65555"), "\(attack)")
        // The register and resolve after it are refused too: NoAuth replies, never a result (error 0).
        #expect(!attack.stdout.contains("error 0"), "\(attack)")
        #expect(attack.stdout.contains("error -65555"), "\(attack)")
        // Its NoAuth replies name what it asked for (the peer's game), but nothing it did not know: no TXT.
        #expect(!attack.stdout.contains("peer-txt-4242"), "\(attack)")
        #expect(!(try setting.peerBrowse()).contains("Peer Game (2)"), "nothing was advertised in the app's name")
        #expect(setting.daemon.logShows("judged as no app"), "\(setting.daemon.log)")
        try setting.expectAppWorks(as: setting.alice)
        // The audit trail credits the app with nothing the attacker did, and still holds the operator's grant.
        let log = try setting.daemon.control(["log", "--lines", "500"]).stdout
        #expect(log.contains("grant"), "\(log)")
        let credited = log.split(separator: "\n").filter { $0.hasPrefix("allow") || $0.contains(" allow ") }
            .filter {
                $0.contains(setting.tools.attacker)
                    || ($0.contains("uid \(setting.alice.uid)") && $0.contains("register"))
            }
        #expect(credited.isEmpty, "\(credited)")
    }

    @Test("the granted app started with LD_PRELOAD is not the app")
    func preloadedApp() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let environment = ["HERALD_ATTACK_SOCKET": setting.daemon.socket, "HERALD_ATTACK_TYPE": "_tictactoe._tcp"]
        // `env` sets the preload for the app only (setpriv, which runs as root first, must not load it).
        let attack = try setting.run(
            as: setting.alice, ["env", "LD_PRELOAD=\(setting.tools.preload)", setting.app, "--version"],
            environment: environment)
        #expect(attack.stdout.contains("preload: status -65555"), "\(attack)")
        #expect(setting.daemon.logShows("started with LD_PRELOAD"), "\(setting.daemon.log)")
        // The same library without the preload setting does nothing, and the app is recognised.
        try setting.expectAppWorks(as: setting.alice)
    }

    @Test("a service type with a domain of its own is not served, so it bypasses no rule")
    func typeWithItsOwnDomain() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        for operation in ["browse", "resolve", "register"] {
            let attack = try setting.run(
                as: setting.alice,
                [
                    setting.tools.attacker, "request", setting.daemon.socket,
                    operation, "_tictactoe._tcp.corp.", "Corp Game",
                ])
            #expect(attack.stdout.contains("status -65544"), "\(operation) is unsupported: \(attack)")
            #expect(!attack.stdout.contains("error 0"), "\(attack)")
            setting.expectNothingLeaked(attack)
        }
        #expect(!(try setting.peerBrowse()).contains("Corp Game"), "nothing was advertised")
    }

    @Test(
        "a pinned executable rewritten in place with its times set back is hashed again and refused; the genuine one passes"
    )
    func pinnedDigestRewritten() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let (area, daemon) = (setting.area, setting.daemon)
        // The pinned app is a copy of the attacker's probe (small, so that hashing it takes no time in a debug build).
        // Trailing bytes do not change what an ELF program does: the last one is the byte the attacker rewrites.
        let app = area.directory + "/bin/pinned"
        try FileManager.default.copyItem(atPath: setting.tools.attacker, toPath: app)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: app))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x41, count: 64))
        try handle.close()
        chmod(app, 0o755)
        let digest = String(try setting.home.check(["sha256sum", app]).stdout.split(separator: " ")[0])
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.pinned", "name": "Pinned", "executables": [app],
                    "executableSHA256": [app: digest],
                    "NSBonjourServices": ["_tictactoe._tcp"], "NSLocalNetworkUsageDescription": "Plays.",
                ], named: "pinned.json"),
        ])
        .expectSuccess()
        try daemon.control(["grant", "org.example.pinned"]).expectSuccess()
        let browse = [app, "request", daemon.socket, "browse", "_tictactoe._tcp"]
        let first = try setting.run(as: setting.alice, browse)
        #expect(first.stdout.contains("status 0"), "the pinned program is allowed: \(first)")

        func rewriteLastByte(_ byte: UInt8) throws {
            var before = stat()
            stat(app, &before)
            let fd = open(app, O_WRONLY)
            #expect(fd >= 0)
            var value = byte
            #expect(pwrite(fd, &value, 1, off_t(before.st_size - 1)) == 1)
            close(fd)
            // Modification and access times set back: size, inode and mtime are what they were.
            var times = [before.st_atim, before.st_mtim]
            #expect(utimensat(AT_FDCWD, app, &times, 0) == 0)
            var after = stat()
            stat(app, &after)
            #expect(
                after.st_ino == before.st_ino && after.st_mtim.tv_sec == before.st_mtim.tv_sec
                    && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_size == before.st_size)
        }
        try rewriteLastByte(0x42)
        let rewritten = try setting.run(as: setting.alice, browse)
        #expect(
            rewritten.stdout.contains("status -65555"), "other content at the same file, size and mtime: \(rewritten)")
        setting.expectNothingLeaked(rewritten)
        try rewriteLastByte(0x41)
        let genuine = try setting.run(as: setting.alice, browse)
        #expect(genuine.stdout.contains("status 0"), "the genuine content is allowed again: \(genuine)")

        // Padded past the size heraldd hashes (a sparse file: no disk is used), it is refused at once, and the log
        // says why; the daemon answers others meanwhile.
        #expect(truncate(app, 300 << 20) == 0)
        let padded = try setting.run(as: setting.alice, browse)
        #expect(padded.stdout.contains("status -65555"), "\(padded)")
        #expect(daemon.logShows("larger than 256 MiB"), "\(daemon.log.suffix(2000))")
    }

    @Test(
        "operations end with the process that started them: an exit or an exec withdraws its service, whoever holds the socket"
    )
    func operationsEndWithTheirProcess() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let daemon = setting.daemon
        try setting.registerAttackerApp(granted: true)
        for ending in ["exit", "exec"] {
            let name = "Handed Game \(ending)"
            let watcher = try setting.peer.spawnHerald(["browse", "_tictactoe._tcp"])
            defer { watcher.terminate(grace: 1) }
            let handoff = try setting.home.spawn(
                try setting.alice.command(
                    [setting.tools.attacker, "handoff", daemon.socket, "_tictactoe._tcp", name, ending]))
            defer { handoff.terminate(grace: 1) }
            try handoff.waitForOutput(containing: "registered error 0", in: .stdout, timeout: 10)
            try watcher.waitForOutput(containing: name, in: .stdout, timeout: 10)
            // The child that kept the connection is told NoAuth, and the peer sees the goodbye.
            try handoff.waitForOutput(containing: "child reply op 65 error -65555", in: .stdout, timeout: 5)
            let gone = waitUntil(timeout: 5) {
                watcher.stdout.split(separator: "\n").contains { $0.contains(name) && $0.contains(" - ") }
            }
            #expect(gone.held, "\(ending): the peer still sees the service: \(watcher.stdout)")
        }
    }

    @Test("a connection opened as root serves as root no longer once its process has dropped to another user")
    func rootDropsPrivileges() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let daemon = setting.daemon
        let attacker = setting.tools.attacker
        let browse = try setting.home.run([
            attacker, "drop", daemon.socket, "\(setting.alice.uid)", "browse", "_tictactoe._tcp",
        ])
        #expect(browse.stdout.contains("status -65555"), "\(browse)")
        setting.expectNothingLeaked(browse)
        try daemon.control([
            "app", "add",
            try setting.area.writeManifest(
                [
                    "id": "org.example.other", "name": "Other", "executables": ["/nonexistent/other"],
                    "NSBonjourServices": ["_other._tcp"], "NSLocalNetworkUsageDescription": "Other.",
                ], named: "other.json"),
        ])
        .expectSuccess()
        let line = #"{"version":1,"id":7,"command":"grant","app":"org.example.other"}"#
        let grant = try setting.home.run([attacker, "drop-control", daemon.controlSocket, "\(setting.alice.uid)", line])
        #expect(grant.stdout.contains("reply ") && !grant.stdout.contains(#""ok":true"#), "\(grant)")
        let show = try daemon.control(["app", "show", "org.example.other"])
        #expect(show.stdout.contains("not-determined"), "the grant did not happen: \(show)")
        // On a control socket whose mode was loosened, a user who is not an operator holds few connections and is
        // refused every command; root still gets in.
        chmod(daemon.controlSocket, 0o666)
        let crowd = try setting.home.spawn(
            try setting.alice.command([attacker, "control-hold", daemon.controlSocket, "70", "10"]))
        defer { crowd.terminate(grace: 1) }
        try crowd.waitForOutput(containing: "answered", in: .stdout, timeout: 30)
        #expect(crowd.stdout.contains("answered 4 closed 66"), "\(crowd.stdout)")
        try daemon.control(["status"]).expectSuccess()
        // Root itself, not dropping, is an operator on both sockets.
        let rootBrowse = try setting.home.run([attacker, "request", daemon.socket, "browse", "_tictactoe._tcp"])
        #expect(rootBrowse.stdout.contains("status 0"), "\(rootBrowse)")
    }

    @Test("one user holding every connection, unread reply and parked operation its share allows starves nobody")
    func oneUserStarvesNobody() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let (daemon, attacker) = (setting.daemon, setting.tools.attacker)
        try setting.registerAttackerApp(granted: false)
        // Alice holds 200 idle connections (her share is 128), 4 more that park 1,024 browses each, 100 that send
        // 20,000 property requests each and never read, and 300 to the NSS socket.
        let hold = try setting.home.spawn(try setting.alice.command([attacker, "hold", daemon.socket, "200", "30"]))
        defer { hold.terminate(grace: 1) }
        try hold.waitForOutput(containing: "served", in: .stdout, timeout: 20)
        #expect(hold.stdout.contains("served 128 refused 72"), "\(hold.stdout)")
        let nssHold = try setting.home.spawn(
            try setting.alice.command([attacker, "nss-hold", setting.confined.nssSocket, "300", "30"]))
        defer { nssHold.terminate(grace: 1) }
        try nssHold.waitForOutput(containing: "connections", in: .stdout, timeout: 20)
        let bob = try setting.run(as: setting.bob, [attacker, "hold", daemon.socket, "1", "0"])
        #expect(bob.stdout.contains("served 1 refused 0"), "another user still gets in: \(bob)")
        // Her idle connections take her whole share: to park and flood, she lets them go.
        hold.terminate(grace: 1)
        let park = try setting.home.spawn(
            try setting.alice.command([attacker, "park", daemon.socket, "4", "1024", "_tictactoe._tcp", "30"]))
        defer { park.terminate(grace: 1) }
        try park.waitForOutput(containing: "sent", in: .stdout, timeout: 30)
        let flood = try setting.home.spawn(
            try setting.alice.command([attacker, "flood", daemon.socket, "100", "20000", "30"]))
        defer { flood.terminate(grace: 1) }
        try flood.waitForOutput(containing: "connections", in: .stdout, timeout: 60)

        // Another user is answered at once, root's browse finds the game, and an operator action is quick.
        let started = Date()
        let other = try setting.run(as: setting.bob, [attacker, "hold", daemon.socket, "1", "0"])
        let answered = Date().timeIntervalSince(started)
        #expect(other.stdout.contains("served 1 refused 0"), "bob is answered: \(other)")
        #expect(answered < 1.0, "bob waited \(answered) s")
        // The attacker's program is registered, not granted: Bob's browse with it is parked, and says so at once.
        let parked = try setting.run(
            as: setting.bob, [attacker, "request", daemon.socket, "browse", "_tictactoe._tcp"])
        #expect(parked.stdout.contains("status 0") && parked.stdout.contains("error -65555"), "\(parked)")
        let rootBrowse = try daemon.herald(["browse", "_tictactoe._tcp", "--timeout", "2"])
        #expect(rootBrowse.stdout.contains("Peer Game"), "\(rootBrowse)")
        let before = Date()
        try daemon.control(["grant", "org.example.attacker"]).expectSuccess()
        let granting = Date().timeIntervalSince(before)
        #expect(granting < 1.0, "the grant took \(granting) s with Alice's operations parked")
        let resident = setting.confined.residentKiB
        #expect(resident > 0 && resident < 64 * 1024, "heraldd's resident memory: \(resident) KiB")
        print(
            "hostile load: bob answered in \(Int(answered * 1000)) ms, grant in \(Int(granting * 1000)) ms, heraldd RSS \(resident) KiB"
        )
        #expect(daemon.logShows("its share"), "\(daemon.log.suffix(2000))")
    }

    @Test("an apps directory others can write, and a manifest linked into it, are not loaded")
    func looseAppsDirectory() throws {
        let setting = try Setting()
        defer { setting.shutdown() }
        let (area, daemon) = (setting.area, setting.daemon)
        let apps = area.directory + "/apps"
        let manifest: [String: Any] = [
            "id": "org.example.dropped", "name": "Dropped", "executables": [setting.tools.attacker],
            "NSBonjourServices": ["_tictactoe._tcp"], "NSLocalNetworkUsageDescription": "Plays.",
        ]
        // A manifest Alice could have written elsewhere, linked into the directory.
        let elsewhere = try area.writeManifest(manifest, named: "dropped.json")
        #expect(symlink(elsewhere, apps + "/dropped.json") == 0)
        daemon.process.send(SIGHUP)
        #expect(daemon.logShows("is a symbolic link"), "\(daemon.log.suffix(2000))")
        // The directory made writable by everyone: nothing in it is loaded, a copied manifest included.
        unlink(apps + "/dropped.json")
        try FileManager.default.copyItem(atPath: elsewhere, toPath: apps + "/dropped.json")
        chmod(apps, 0o777)
        daemon.process.send(SIGHUP)
        #expect(daemon.logShows("can be written by other users"), "\(daemon.log.suffix(2000))")
        #expect(!(try daemon.control(["app", "list"])).stdout.contains("org.example.dropped"))
        // Tightened again, the same file is registered.
        chmod(apps, 0o755)
        daemon.process.send(SIGHUP)
        let registered = waitUntil(timeout: 5) {
            (try? daemon.control(["app", "list"]))?.stdout.contains("org.example.dropped") == true
        }
        #expect(registered.held, "\(daemon.log.suffix(2000))")
    }
}
