import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Faults from outside: the daemon killed under its clients, an interface that goes away and comes back while
/// the daemon is busy, and a state directory that becomes read-only.
@Suite("Fault injection", .serialized)
struct FaultInjectionTests {
    @Test("kill -9 under clients: they get a clear error, a restarted daemon serves them again, the store is intact")
    func killedUnderClients() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let (home, away) = (lan.hosts[0], lan.hosts[1])
        var daemon = try home.startPermissionDaemon(area: area)
        let peer = try away.startHeraldd()
        let app = try area.registerTicTacToe(on: daemon)
        try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()

        let browse = try home.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        let register = try home.spawnApp(app, ["register", "Survivor", "_tictactoe._tcp", "4000"], daemon: daemon)
        try register.waitForOutput(containing: "Survivor", in: .stdout, timeout: 10)
        #expect(try peer.herald(["browse", "_tictactoe._tcp", "--timeout", "3"]).stdout.contains("Survivor"))

        daemon.process.send(SIGKILL)
        _ = daemon.process.waitForExit(timeout: 5)
        for client in [browse, register] {
            #expect(client.waitForExit(timeout: 5) == 69, "\(client.output)")
            #expect(
                client.stderr.contains("the daemon closed the connection") || client.stderr.contains("not running"),
                "\(client.stderr)")
            #expect(
                client.stderr.contains("journalctl -u heraldd") || client.stderr.contains("systemctl start heraldd"),
                "the message says what to do: \(client.stderr)")
        }

        // Restarted on the same paths (the stale socket files are taken over), with the same store.
        daemon = try home.startPermissionDaemon(area: area)
        let show = try daemon.control(["app", "show", "org.example.tictactoe"])
        #expect(show.stdout.contains("decision:      granted"), "the grant survived: \(show)")
        let again = try home.spawnApp(app, ["register", "Survivor", "_tictactoe._tcp", "4000"], daemon: daemon)
        defer { again.terminate(grace: 1) }
        try again.waitForOutput(containing: "Survivor", in: .stdout, timeout: 10)
        let seen = try peer.herald(["resolve", "Survivor", "_tictactoe._tcp", "--timeout", "5"])
        #expect(seen.status == 0 && seen.stdout.contains(":4000"), "the re-registered service is back: \(seen)")
        let integrity = try home.run([
            "python3", "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
            daemon.storePath,
        ])
        #expect(integrity.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "\(integrity)")
    }

    @Test(
        "an interface that goes down and up, then is removed and re-added, under load: results go and return, the daemon keeps serving"
    )
    func interfaceBouncesUnderLoad() throws {
        let lan = try TestLAN(hosts: 2)
        defer { lan.shutdown() }
        let (home, away) = (lan.hosts[0], lan.hosts[1])
        let daemon = try home.startHeraldd()
        let peer = try away.startHeraldd()
        let service = try peer.spawnHerald(["register", "Steady", "_hbounce._tcp", "7300"])
        defer { service.terminate(grace: 1) }
        try service.waitForOutput(containing: "Steady", in: .stdout, timeout: 10)
        let watcher = try daemon.spawnHerald(["browse", "_hbounce._tcp"])
        defer { watcher.terminate(grace: 1) }
        try watcher.waitForOutput(containing: "Steady", in: .stdout, timeout: 10)

        // Load: twenty clients browsing and resolving in a loop on the host under test.
        let load = try home.spawn([
            "sh", "-c",
            """
            end=$(($(date +%s) + 20))
            while [ $(date +%s) -lt $end ]; do
                for n in $(seq 20); do "$0" browse _hbounce._tcp --resolve --timeout 0.5 --socket "$1" >/dev/null 2>&1 & done
                wait
            done
            """, try HeraldBinaries.herald(), daemon.socket,
        ])
        defer { load.terminate(grace: 1) }
        usleep(1_000_000)
        let interface = try #require(home.interfaces.first).name
        try home.check(["ip", "link", "set", interface, "down"])
        try watcher.waitForOutput(containing: " -  ", in: .stdout, timeout: 10)
        usleep(1_000_000)
        try home.check(["ip", "link", "set", interface, "up"])
        let back = waitUntil(timeout: 15) {
            watcher.stdout.split(separator: "\n").filter { $0.contains("Steady") && $0.contains(" +  ") }.count >= 2
        }
        #expect(
            back.held,
            "the service did not come back after the interface returned:\n\(watcher.stdout)\n\(daemon.log.suffix(2000))"
        )

        // Unplugged and plugged back: the link is deleted, and a new one (same name and addresses, new index) appears.
        let old = try #require(home.interfaces.first)
        let replaced = try home.replaceInterface(old)
        #expect(replaced.index != old.index)
        let returned = waitUntil(timeout: 15) {
            watcher.stdout.split(separator: "\n").filter { $0.contains("Steady") && $0.contains(" +  ") }.count >= 3
        }
        #expect(
            returned.held,
            "the service did not come back on the re-added interface:\n\(watcher.stdout)\n\(daemon.log.suffix(2000))")
        #expect(
            watcher.stdout.split(separator: "\n").filter { $0.contains("Steady") && $0.contains(" -  ") }.count >= 2,
            "the removal was reported:\n\(watcher.stdout)")
        #expect(load.waitForExit(timeout: 30) != nil)
        #expect(daemon.process.isRunning, "\(daemon.log.suffix(2000))")
        let resolved = try daemon.herald(["resolve", "Steady", "_hbounce._tcp", "--timeout", "5"])
        #expect(resolved.status == 0, "\(resolved)")
    }

    @Test("a read-only state directory: the daemon says why, changes fail with a clear error, nothing crashes")
    func readOnlyStateDirectory() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let app = try area.installApp(named: "tictactoe")
        var daemon = try host.startPermissionDaemon(area: area)
        try daemon.control(["app", "add", try area.ticTacToeManifest(executable: app)]).expectSuccess()
        daemon.stop()

        // Read-only from now on, in this host's mount namespace only (root ignores file modes, not mounts).
        let state = daemon.stateDirectory
        try host.check(["mount", "--bind", state, state])
        try host.check(["mount", "-o", "remount,bind,ro", state])
        defer { _ = try? host.run(["umount", state]) }
        let before = try host.check(["sha256sum", daemon.storePath]).stdout

        let argv = [
            try HeraldBinaries.heraldd(), "--hostname", "readonly", "--socket", area.appSocket,
            "--control-socket", area.directory + "/control.sock", "--state-dir", state,
        ]
        let attempt = try host.spawn(argv)
        let outcome = waitUntil(timeout: 10) {
            !attempt.isRunning || TestLAN.Host.accepts(area.directory + "/control.sock")
        }
        #expect(outcome.held)
        if attempt.isRunning {
            // It runs on a store it can read but not write: changes fail with a clear error, reads work.
            daemon = try host.startPermissionDaemon(area: area, arguments: ["--hostname", "readonly"])
            attempt.terminate(grace: 1)
            let grant = try daemon.control(["grant", "org.example.tictactoe"])
            #expect(grant.status == 69, "\(grant)")
            #expect(grant.stderr.contains("permission store"), "\(grant)")
            #expect(daemon.process.isRunning, "\(daemon.log.suffix(2000))")
        } else {
            #expect(attempt.waitForExit(timeout: 1) != 0)
            #expect(attempt.stderr.contains("permission store"), "the refusal names the store: \(attempt.stderr)")
            #expect(attempt.stderr.contains(state), "and where it is: \(attempt.stderr)")
        }
        #expect(try host.check(["sha256sum", daemon.storePath]).stdout == before, "the store was not touched")
    }

    @Test(
        "a store another process keeps locked: a change fails within seconds with a clear error the daemon logs, and it keeps serving"
    )
    func lockedStore() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        _ = try area.registerTicTacToe(on: daemon)
        // Someone's sqlite3 session holds an exclusive lock for six seconds.
        let holder = try host.spawn([
            "python3", "-c",
            """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            time.sleep(6)
            db.execute("COMMIT")
            """, daemon.storePath,
        ])
        defer { holder.terminate(grace: 1) }
        _ = try holder.waitForOutput(containing: "locked", in: .stdout, timeout: 10)
        let started = Date()
        let grant = try daemon.control(["grant", "org.example.tictactoe"])
        let took = Date().timeIntervalSince(started)
        #expect(grant.status == 69, "\(grant)")
        #expect(grant.stderr.contains("permission store") && grant.stderr.contains("check heraldd's log"), "\(grant)")
        #expect(took < 4, "the daemon waited \(took) s for the lock")
        #expect(daemon.logShows("control socket: ") && daemon.log.contains("locked"), "\(daemon.log.suffix(1500))")
        // Meanwhile, and afterwards, it serves.
        #expect(try daemon.control(["status"]).status == 0)
        #expect(holder.waitForExit(timeout: 10) == 0)
        try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
        #expect(daemon.process.isRunning, "\(daemon.log.suffix(1500))")
    }
}
