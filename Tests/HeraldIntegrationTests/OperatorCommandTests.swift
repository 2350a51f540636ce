import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The operators' side of the permission broker: the interactive prompt, the live audit log, status, the apps
/// directory with SIGHUP, the operator group, and a store the daemon must refuse to touch.
@Suite("Operator commands")
struct OperatorCommandTests {
    @Test("herald prompt shows a waiting app like a permission dialog and records Allow; the app's results start")
    func promptAllows() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        let app = try area.registerTicTacToe(on: daemon)
        let peer = try daemon.spawnHerald(["register", "Peer Game", "_tictactoe._tcp", "5000"])
        defer { peer.terminate(grace: 1) }
        let browse = try host.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        defer { browse.terminate(grace: 1) }
        try browse.waitForOutput(containing: "waiting for permission", in: .stderr, timeout: 5)

        // "s" (decide later), then the end of input: the request stays pending, and the prompt ends rather than wait
        // for the next request.
        let later = try host.run(
            [
                "sh", "-c", "printf 's\\n' | \"$0\" prompt --control-socket \"$1\"",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 10)
        #expect(later.status == 0 && !later.timedOut, "\(later)")
        #expect(later.stdout.contains("org.example.tictactoe: left undecided"), "\(later)")

        // The operator answers "a" (Allow) at the prompt.
        let prompt = try host.run(
            [
                "sh", "-c", "printf 'a\\n' | \"$0\" prompt --once --control-socket \"$1\"",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 20)
        #expect(prompt.status == 0, "\(prompt)")
        #expect(
            prompt.stdout.contains(
                "\u{201C}Tic Tac Toe\u{201D} would like to find and connect to devices on your local network."),
            "\(prompt)")
        #expect(prompt.stdout.contains("Tic Tac Toe looks for players on your local network."), "\(prompt)")
        #expect(prompt.stdout.contains("browse _tictactoe._tcp"), "\(prompt)")
        #expect(prompt.stdout.contains("org.example.tictactoe: granted (was not-determined)"), "\(prompt)")
        try browse.waitForOutput(containing: "Peer Game", in: .stdout, timeout: 5)

        // Don't Allow, for an app that asks next.
        let chess = try area.installApp(named: "chess")
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.chess", "name": "Chess", "executables": [chess],
                    "NSBonjourServices": ["_chess._tcp"],
                    "NSLocalNetworkUsageDescription": "Chess finds opponents nearby.",
                ], named: "chess.json"),
        ]).expectSuccess()
        let asking = try host.spawnApp(chess, ["browse", "_chess._tcp"], daemon: daemon)
        defer { asking.terminate(grace: 1) }
        let denied = try host.run(
            [
                "sh", "-c", "(sleep 1; printf 'd\\n') | \"$0\" prompt --once --control-socket \"$1\"",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 20)
        #expect(denied.stdout.contains("\u{201C}Chess\u{201D} would like to find"), "\(denied)")
        #expect(denied.stdout.contains("org.example.chess: denied (was not-determined)"), "\(denied)")

        // Nothing pending and no input: it ends at once.
        let idle = try host.run(
            [
                "sh", "-c", "\"$0\" prompt --control-socket \"$1\" </dev/null",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 10)
        #expect(idle.status == 0 && !idle.timedOut, "\(idle)")
        // Input that closes while it waits for requests ends it too, soon after.
        let closed = try host.run(
            [
                "sh", "-c", "sleep 1 | \"$0\" prompt --control-socket \"$1\"",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 10)
        #expect(closed.status == 0 && !closed.timedOut, "\(closed)")
    }

    @Test("the control socket notifies subscribers of new pending requests and of decision changes as they happen")
    func liveNotifications() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        let app = try area.registerTicTacToe(on: daemon)

        // A subscriber speaking the protocol directly: it prints each event line it receives.
        let subscriber = try host.spawn([
            "python3", "-c",
            """
            import json, socket, sys
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(sys.argv[1])
            connection.sendall(b'{"version": 1, "id": 1, "command": "subscribe", "topics": ["requests", "decisions"]}\\n')
            for line in connection.makefile():
                message = json.loads(line)
                if message.get("id") == 1:
                    print("subscribed", message["ok"], flush=True)
                elif "event" in message:
                    detail = message.get("request") or message.get("app") or {}
                    print("event", message["event"], detail.get("app") or detail.get("id"), message.get("change"), flush=True)
            """, daemon.controlSocket,
        ])
        defer { subscriber.terminate(grace: 1) }
        try subscriber.waitForOutput(containing: "subscribed True", in: .stdout, timeout: 5)

        let browse = try host.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        defer { browse.terminate(grace: 1) }
        try subscriber.waitForOutput(containing: "event pending-request org.example.tictactoe", in: .stdout, timeout: 5)
        try daemon.control(["deny", "org.example.tictactoe"]).expectSuccess()
        try subscriber.waitForOutput(
            containing: "event decision org.example.tictactoe denied (was not-determined)",
            in: .stdout, timeout: 5)

        // herald prompt started before the request arrives shows it as it comes.
        let chess = try area.installApp(named: "chess")
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.chess", "name": "Chess", "executables": [chess],
                    "NSBonjourServices": ["_chess._tcp"],
                    "NSLocalNetworkUsageDescription": "Chess finds opponents nearby.",
                ], named: "chess.json"),
        ]).expectSuccess()
        let prompt = try host.spawn([
            "sh", "-c", "(sleep 4; printf 'a\\n') | \"$0\" prompt --once --control-socket \"$1\"",
            try HeraldBinaries.herald(), daemon.controlSocket,
        ])
        defer { prompt.terminate(grace: 1) }
        usleep(500_000)
        let asking = try host.spawnApp(chess, ["browse", "_chess._tcp"], daemon: daemon)
        defer { asking.terminate(grace: 1) }
        try prompt.waitForOutput(containing: "\u{201C}Chess\u{201D} would like to find", in: .stdout, timeout: 5)
        #expect(prompt.waitForExit(timeout: 10) == 0, "\(prompt.output)")
        #expect(prompt.stdout.contains("org.example.chess: granted (was not-determined)"), "\(prompt.output)")

        // With --json, standard output holds JSON lines only (the request, then what the answer did); the question
        // goes to standard error.
        let go = try area.installApp(named: "go")
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.go", "name": "Go", "executables": [go], "NSBonjourServices": ["_go._tcp"],
                    "NSLocalNetworkUsageDescription": "Go finds opponents nearby.",
                ], named: "go.json"),
        ]).expectSuccess()
        let jsonPrompt = try host.spawn([
            "sh", "-c", "(sleep 4; printf 'd\\n') | \"$0\" prompt --json --once --control-socket \"$1\"",
            try HeraldBinaries.herald(), daemon.controlSocket,
        ])
        defer { jsonPrompt.terminate(grace: 1) }
        usleep(500_000)
        let askingGo = try host.spawnApp(go, ["browse", "_go._tcp"], daemon: daemon)
        defer { askingGo.terminate(grace: 1) }
        #expect(jsonPrompt.waitForExit(timeout: 15) == 0, "\(jsonPrompt.output)")
        let lines = jsonPrompt.stdout.split(separator: "\n")
        let objects = HeraldJSON.objects(jsonPrompt.stdout)
        #expect(lines.count >= 2 && objects.count == lines.count, "not all JSON: \(jsonPrompt.output)")
        #expect(
            objects.contains {
                $0["app"] as? String == "org.example.go" && $0["answer"] as? String == "deny"
                    && ($0["change"] as? String)?.contains("denied") == true
            }, "\(jsonPrompt.output)")
        #expect(jsonPrompt.stderr.contains("[a] Allow"), "\(jsonPrompt.output)")
    }

    @Test("herald log --follow prints decisions as they are made; herald status counts apps, operations and requests")
    func logAndStatus() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        let app = try area.registerTicTacToe(on: daemon)

        let follow = try host.spawn([
            try HeraldBinaries.herald(), "log", "--follow", "--control-socket", daemon.controlSocket,
        ])
        defer { follow.terminate(grace: 1) }
        try follow.waitForOutput(containing: "app-add", in: .stdout, timeout: 5)
        let browse = try host.spawnApp(app, ["browse", "_tictactoe._tcp"], daemon: daemon)
        defer { browse.terminate(grace: 1) }
        try follow.waitForOutput(containing: "park (not-determined)", in: .stdout, timeout: 5)
        // -n as tail has it: the last line only.
        let last = try daemon.control(["log", "-n", "1"])
        #expect(
            last.status == 0 && last.stdout.split(separator: "\n").count == 1 && last.stdout.contains("park"), "\(last)"
        )

        let status = try daemon.control(["status", "--json"])
        #expect(status.status == 0, "\(status)")
        let object = HeraldJSON.objects(status.stdout).first ?? [:]
        #expect(object["apps"] as? Int == 1, "\(status)")
        #expect(object["pendingRequests"] as? Int == 1, "\(status)")
        #expect(object["parkedOperations"] as? Int == 1, "\(status)")
        #expect(object["clients"] as? Int == 1, "\(status)")
        #expect((object["interfaces"] as? [[String: Any]])?.isEmpty == false, "\(status)")
        // Its memory: the resident set as the kernel reports it, and a live heap of some size.
        let resident = try #require(object["residentKiB"] as? Int, "\(status)")
        let kernel = try daemon.process.statusKiB("VmRSS")
        #expect(resident > 1024 && abs(resident - kernel) < kernel / 5, "status \(resident) KiB, kernel \(kernel) KiB")
        #expect((object["heapInUseKiB"] as? Int ?? 0) > 100, "\(status)")
        let text = try daemon.control(["status"])
        #expect(text.stdout.contains("apps: 1 (0 granted, 0 denied), pending requests: 1"), "\(text)")
        #expect(text.stdout.contains(/memory: \d+\.\d MiB resident, \d+\.\d MiB heap in use/), "\(text)")

        try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
        try follow.waitForOutput(containing: "grant  granted (operator)", in: .stdout, timeout: 5)
        let after = HeraldJSON.objects(try daemon.control(["status", "--json"]).stdout).first ?? [:]
        #expect(after["parkedOperations"] as? Int == 0 && after["grantedApps"] as? Int == 1, "\(after)")
        #expect(after["pendingRequests"] as? Int == 0, "a decision clears the app's pending requests: \(after)")
    }

    @Test(
        "manifests dropped into the apps directory are registered on SIGHUP; a broken one is reported and skipped; a changed configuration file is reported as applying at restart"
    )
    func appsDirectoryReload() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let appsDirectory = area.directory + "/apps.d"
        try FileManager.default.createDirectory(atPath: appsDirectory, withIntermediateDirectories: true)
        let app = try area.installApp(named: "tictactoe")
        try FileManager.default.copyItem(
            atPath: try area.ticTacToeManifest(executable: app),
            toPath: appsDirectory + "/tictactoe.json")
        let config = area.directory + "/heraldd.conf"
        try "[limits]\nclients = 300\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try host.startPermissionDaemon(
            area: area, arguments: ["--apps-dir", appsDirectory, "--config", config])
        let listed = try waitUntil(timeout: 5) {
            try daemon.control(["app", "list"]).stdout.contains("org.example.tictactoe")
        }
        #expect(listed.held, "the manifest present at start is registered")

        try "{\"id\": \"broken\", \"executables\": [\"relative\"]}".write(
            toFile: appsDirectory + "/broken.json",
            atomically: true, encoding: .utf8)
        let chess = try area.installApp(named: "chess")
        try FileManager.default.copyItem(
            atPath: try area.writeManifest(
                [
                    "id": "org.example.chess", "name": "Chess", "executables": [chess],
                    "NSBonjourServices": ["_chess._tcp"],
                    "NSLocalNetworkUsageDescription": "Chess finds opponents nearby.",
                ], named: "chess.json"),
            toPath: appsDirectory + "/chess.json")
        daemon.process.send(SIGHUP)
        let reloaded = try waitUntil(timeout: 5) {
            try daemon.control(["app", "list"]).stdout.contains("org.example.chess")
        }
        #expect(reloaded.held, "\(daemon.log)")
        #expect(daemon.logShows("broken.json: not registered"), "\(daemon.log)")
        #expect(!daemon.log.contains("has changed"), "the file is as it was: \(daemon.log)")

        // Settings apply at start only: a reload says so when the file changed, and when it is broken.
        try "[limits]\nclients = 400\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.process.send(SIGHUP)
        #expect(daemon.logShows("\(config) has changed; its settings apply when heraldd restarts"), "\(daemon.log)")
        try "[limits]\nclients = many\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.process.send(SIGHUP)
        #expect(daemon.logShows("heraldd keeps the settings it started with"), "\(daemon.log)")
        #expect(daemon.process.isRunning)
    }

    @Test("members of the configured operator group are operators; everyone else is an app")
    func operatorGroup() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        // The 'users' group (gid 100) stands in for 'herald': the test changes nothing on the machine.
        let config = area.directory + "/heraldd.conf"
        try "[permissions]\noperator-group = users\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try host.startPermissionDaemon(area: area, arguments: ["--config", config])
        let stranger = try area.installApp(named: "stranger")
        let setpriv = try Requirements.requireExecutable("setpriv")
        let asMember = [setpriv, "--reuid=65534", "--regid=65534", "--groups=100", "--"]

        let member = try host.run(
            asMember + [stranger, "browse", "_anything._tcp", "--timeout", "1", "--socket", daemon.socket])
        #expect(member.status == 0, "an operator browses anything: \(member)")
        let status = try host.run(asMember + [stranger, "status", "--control-socket", daemon.controlSocket])
        #expect(status.status == 0, "an operator uses the control socket: \(status)")
        let outsider = try host.runApp(stranger, ["browse", "_anything._tcp", "--timeout", "1"], daemon: daemon)
        #expect(outsider.status == 77, "\(outsider)")
    }

    @Test("a file that is not a Herald store stops the daemon with a clear message and is left untouched")
    func refusesForeignStore() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let host = lan.hosts[0]
        let state = host.directory + "/foreign-state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let content = Data("these are not the permissions you are looking for\n".utf8)
        try content.write(to: URL(fileURLWithPath: state + "/permissions.sqlite"))
        let result = try host.run(
            [
                try HeraldBinaries.heraldd(), "--hostname", "foreign", "--socket", host.directory + "/f.sock",
                "--control-socket", host.directory + "/fc.sock", "--state-dir", state,
            ], timeout: 10)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("is not a Herald permission store"), "\(result)")
        #expect(FileManager.default.contents(atPath: state + "/permissions.sqlite") == content)
    }
}
