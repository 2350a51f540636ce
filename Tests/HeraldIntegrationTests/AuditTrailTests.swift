import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The audit trail and the pending requests against a hostile local user (issue 25, items 7 and 8), on a real
/// heraldd: a flood of refusals cannot push the operator's actions out of the log, long lines do not break
/// `herald log`, an executable path cannot draw on the operator's screen or forge heraldd's log, and one app's flood
/// of address lookups neither evicts another app's pending request nor floods `herald prompt`.
@Suite("Audit trail and pending requests under a flood")
struct AuditTrailTests {
    /// A file name that, printed raw on a terminal, erases its line and draws a forged grant in its place.
    static let forgingName =
        "evil\u{1B}[2K\u{1B}[1G\u{9B}2K2026-11-27 12:00:00  org.example.tictactoe  grant  granted (operator)"

    /// Installs a copy of the system's Python at `components` under the area's `bin` (directories made
    /// traversable for every user), to run as an app whose executable path is that.
    static func installPython(in area: PermissionTestArea, at components: [String]) throws -> String {
        // mkdir(2) and cp rather than FileManager, which refuses paths this long.
        var directory = area.directory + "/bin"
        for component in components.dropLast() {
            directory += "/" + component
            guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
                throw HarnessError.setup("mkdir failed: errno \(errno)")
            }
            chmod(directory, 0o755)
        }
        let path = directory + "/" + components.last!
        let interpreter = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        let copy = try Command.run(["cp", interpreter, path])
        guard copy.succeeded else { throw HarnessError.setup("cp failed: \(copy)") }
        chmod(path, 0o755)
        return path
    }

    /// True when `text` holds a character a terminal would act on (C0 other than newline, DEL, C1).
    static func holdsControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
    }

    @Test(
        "10,500 refused requests of distinct types from an unprivileged user leave the operator's grant in herald log")
    func refusalFloodKeepsOperatorActions() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        _ = try area.registerTicTacToe(on: daemon)
        try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()

        let flood = try host.run(
            try AppUser.command([
                "/usr/bin/python3", "-c", RequestFloods.browses, daemon.socket,
                "10500", "f", "1",
            ]), timeout: 600)
        #expect(flood.stdout.contains("statuses -65555=10500 in"), "\(flood)")
        print(
            "audit flood: 10,500 refused browses of distinct types \(flood.stdout.split(separator: " ").suffix(3).joined(separator: " "))"
        )

        // In the store itself, whatever herald log can show.
        if let sqlite = Requirements.executable("sqlite3") {
            let stored = try Command.run([
                sqlite, "-readonly", daemon.storePath,
                "SELECT count(*) FROM audit_log WHERE operation IN ('app-add', 'grant')",
            ])
            #expect(stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(stored)")
        }
        let log = try daemon.control(["log", "-n", "10000", "--json"], timeout: 60)
        #expect(log.succeeded, "\(log.stderr)")
        let lines = HeraldJSON.objects(log.stdout)
        #expect(
            lines.contains { $0["operation"] as? String == "grant" && $0["app"] as? String == "org.example.tictactoe" },
            "the operator's grant is gone from the log")
        #expect(lines.contains { $0["operation"] as? String == "app-add" })
        // The flood is folded: a hundred lines a minute one by one, and one line counting the rest.
        let flooder = lines.filter { ($0["uid"] as? Int) == AppUser.uid && $0["reason"] as? String == "unregistered" }
        let total = flooder.map { ($0["count"] as? Int) ?? 1 }.reduce(0, +)
        #expect(total == 10_500, "every refusal is counted")
        #expect(flooder.count < 1_000, "\(flooder.count) lines for the flood")
        let folded = flooder.filter { $0["operation"] as? String == "folded" }
        #expect(!folded.isEmpty)
        print("audit flood: \(flooder.count) lines in the log for it (\(folded.count) folded), grant kept")

        let human = try daemon.control(["log", "-n", "5"])
        #expect(human.succeeded && human.stdout.contains("folded ×"), "\(human)")
    }

    @Test("herald log -n 300 and herald log --follow work when every line is long")
    func longLines() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        // An executable path of about 3,000 bytes of escape characters (6 bytes each in JSON); heraldd reads about
        // the first thousand of it, and each refusal's line names that twice: about 12 KiB of JSON a line.
        let component = String(repeating: "\u{1B}", count: 200)
        let python = try Self.installPython(in: area, at: Array(repeating: component, count: 15) + ["longapp"])
        #expect(python.utf8.count > 3_000 && python.utf8.count < 4_000)
        let shownPath = String(python.prefix(600))

        let follower = try host.spawn([
            try HeraldBinaries.herald(), "log", "--follow", "--json", "-n", "1",
            "--control-socket", daemon.controlSocket,
        ])
        defer { follower.terminate(grace: 1) }
        usleep(1_000_000)
        // Four users, so that each one's hundred refusals of the minute are written one by one: 400 long lines. Bursts
        // of 50 connections, so that heraldd decides and records them together: one log event holds ~600 KiB of
        // lines unless it is paged.
        for (index, uid) in [65534, 65533, 65532, 65531].enumerated() {
            let flood = try host.run(
                [
                    try Requirements.requireExecutable("setpriv"), "--reuid=\(uid)", "--regid=\(uid)",
                    "--clear-groups", "--", python, "-c", RequestFloods.browses, daemon.socket, "100",
                    "g\(index)x", "50",
                ], timeout: 120)
            #expect(flood.stdout.contains("statuses -65555=100 in"), "\(flood)")
        }

        // The follower reads paged events as fast as it parses 12 KiB lines: on a loaded machine that takes a while.
        func distinctFollowed() -> Int {
            let followed = HeraldJSON.objects(follower.stdout).compactMap { $0["detail"] as? String }
            return Set(
                followed.filter { $0.contains(shownPath) }.compactMap { $0.split(separator: " ").dropFirst().first }
            )
            .count
        }
        _ = waitUntil(timeout: 90) { follower.stdout.split(separator: "\n").count { $0.contains("browse _g") } >= 400 }
        #expect(follower.isRunning, "herald log --follow ended: \(follower.stderr.suffix(2_000))")
        #expect(distinctFollowed() == 400, "the follower saw \(distinctFollowed()) of the 400 requests")

        let json = try daemon.control(["log", "-n", "300", "--json"], timeout: 60)
        #expect(json.succeeded, "\(json.stderr.suffix(2_000))")
        let lines = HeraldJSON.objects(json.stdout)
        #expect(lines.count == 300)
        #expect((lines.last?["detail"] as? String)?.contains("browse _g3x99._tcp by ") == true)
        #expect((lines.last?["detail"] as? String)?.contains(shownPath) == true)
        #expect(json.stdout.split(separator: "\n").allSatisfy { $0.utf8.count < 64 * 1024 })

        let human = try daemon.control(["log", "-n", "300"], timeout: 60)
        #expect(human.succeeded, "\(human.stderr.suffix(2_000))")
        #expect(human.stdout.split(separator: "\n").count == 300)
        #expect(human.stdout.contains(String(repeating: "\\x1B", count: 200)))
        #expect(!Self.holdsControls(human.stdout))
    }

    @Test(
        "an executable path with terminal escapes shows escaped in herald log, requests, app show, prompt and heraldd's log"
    )
    func escapedPaths() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area, arguments: ["--log-level", "info"])
        let evil = try Self.installPython(in: area, at: [Self.forgingName])
        let escapedName = "evil\\x1B[2K\\x1B[1G\\u{9B}2K2026-11-27 12:00:00  org.example.tictactoe  grant"

        // Unregistered: refused, and logged by heraldd with the path.
        let refused = try host.run(
            try AppUser.command([
                evil, "-c",
                DNSSDByHand.python + """
                    s = connect()
                    request(s, 6, b"ctx-evil", browse_body("_evil._tcp"))
                    print("status %d" % status_of(s))
                    """, daemon.socket,
            ]), timeout: 20)
        #expect(refused.stdout.contains("status -65555"), "\(refused)")
        #expect(daemon.logShows(escapedName), "\(daemon.log.suffix(3_000))")
        #expect(!Self.holdsControls(daemon.log), "heraldd's log holds raw control characters")

        let log = try daemon.control(["log"])
        #expect(log.succeeded && log.stdout.contains(escapedName), "\(log)")
        #expect(!Self.holdsControls(log.stdout))
        // JSON stays JSON, with the path's value intact.
        let json = try daemon.control(["log", "--json"])
        #expect(!Self.holdsControls(json.stdout))
        #expect(HeraldJSON.objects(json.stdout).contains { ($0["detail"] as? String)?.contains(evil) == true })

        // Registered under that path, the app looks up a name holding C1 and C0 controls: a pending request.
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.evil", "name": "Evil", "executables": [evil],
                    "NSBonjourServices": ["_evil._tcp"],
                    "NSLocalNetworkUsageDescription": "Evil looks things up.",
                ], named: "evil.json"),
        ]).expectSuccess()
        let lookup = try host.run(
            try AppUser.command([
                evil, "-c", RequestFloods.oneLookup, daemon.socket,
                "printer\u{9B}2K\u{1B}[31m.local",
            ]), timeout: 20)
        #expect(lookup.stdout.contains("status 0"), "\(lookup)")

        let requests = try daemon.control(["requests"])
        #expect(
            requests.succeeded && requests.stdout.contains("address lookups (latest printer\\u{9B}2k"), "\(requests)")
        #expect(!Self.holdsControls(requests.stdout))
        let requestsJSON = try daemon.control(["requests", "--json"])
        #expect(!Self.holdsControls(requestsJSON.stdout))
        #expect(
            HeraldJSON.objects(requestsJSON.stdout).contains {
                ($0["latestSubject"] as? String)?.hasPrefix("printer\u{9B}2k") == true
            }, "\(requestsJSON)")

        let show = try daemon.control(["app", "show", "org.example.evil"])
        #expect(show.succeeded && show.stdout.contains(escapedName), "\(show)")
        #expect(!Self.holdsControls(show.stdout))

        let prompt = try host.run(
            [
                "sh", "-c", "printf 's\\n' | \"$0\" prompt --once --control-socket \"$1\"",
                try HeraldBinaries.herald(), daemon.controlSocket,
            ], timeout: 20)
        #expect(
            prompt.succeeded && prompt.stdout.contains("asked to look up addresses on the local network (1 time, ")
                && prompt.stdout.contains("latest printer\\u{9B}2k"), "\(prompt)")
        #expect(!Self.holdsControls(prompt.stdout))
    }

    @Test("herald requests and herald app list page long lists: 300 pending requests with 1,000-character descriptions")
    func longLists() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        // Quotes and backslashes take two bytes each in JSON: each request is about 2.4 KiB, 700 KiB in all, more
        // than a control line may hold.
        let usage = String(repeating: "\"\\", count: 500)
        for index in 0..<6 {
            let scanner = try area.installPython(named: "scanner\(index)")
            try daemon.control([
                "app", "add",
                try area.writeManifest(
                    [
                        "id": "org.example.scanner\(index)", "name": "Scanner \(index)", "executables": [scanner],
                        "NSLocalNetworkUsageDescription": usage,
                        "entitlements": ["com.apple.developer.networking.multicast"],
                    ],
                    named: "scanner\(index).json"),
            ]).expectSuccess()
            // With the entitlement, each name queried is a request of its own: fifty, the most an app keeps.
            let flood = try host.run(
                try AppUser.command([
                    scanner, "-c", RequestFloods.queries, daemon.socket, "60",
                    "thing",
                ]), timeout: 60)
            #expect(flood.stdout.contains("statuses 0=60 in"), "\(flood)")
        }
        let json = try daemon.control(["requests", "--json"])
        #expect(json.succeeded, "\(json.stderr)")
        let requests = HeraldJSON.objects(json.stdout)
        #expect(requests.count == 300)
        #expect(json.stdout.utf8.count > ControlLineLimit.bytes + 100_000)
        #expect(Set(requests.compactMap { $0["app"] as? String }).count == 6)
        #expect(requests.allSatisfy { ($0["usageDescription"] as? String) == usage })
        let human = try daemon.control(["requests"])
        #expect(human.succeeded && human.stdout.split(separator: "\n").count == 300, "\(human.stderr)")
        let apps = try daemon.control(["app", "list", "--json"])
        #expect(HeraldJSON.objects(apps.stdout).map { $0["pendingRequests"] as? Int } == Array(repeating: 50, count: 6))
    }

    @Test(
        "one app's flood of distinct address lookups neither evicts another app's pending request nor floods herald prompt"
    )
    func addressLookupFlood() throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
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
        let flooder = try area.installPython(named: "flooder")
        try daemon.control([
            "app", "add",
            try area.writeManifest(
                [
                    "id": "org.example.flooder", "name": "Flooder", "executables": [flooder],
                    "NSBonjourServices": ["_flood._tcp"], "NSLocalNetworkUsageDescription": "Flooder looks up names.",
                ],
                named: "flooder.json"),
        ]).expectSuccess()

        // An operator at the prompt, answering "decide later" to every question, five times a second.
        let prompt = try host.spawn([
            "sh", "-c",
            "(sleep 1; for i in $(seq 100); do printf 's\\n'; sleep 0.2; done) | \"$0\" prompt "
                + "--control-socket \"$1\"", try HeraldBinaries.herald(), daemon.controlSocket,
        ])
        defer { prompt.terminate(grace: 1) }
        usleep(500_000)
        let browse = try host.spawnApp(chess, ["browse", "_chess._tcp"], daemon: daemon)
        defer { browse.terminate(grace: 1) }
        try browse.waitForOutput(containing: "waiting for permission", in: .stderr, timeout: 5)

        let flood = try host.run(
            try AppUser.command([
                flooder, "-c", RequestFloods.addressLookups, daemon.socket,
                "1100", "flood",
            ]), timeout: 120)
        #expect(flood.stdout.contains("statuses 0=1100 in"), "\(flood)")
        usleep(3_000_000)

        let requests = HeraldJSON.objects(try daemon.control(["requests", "--json"]).stdout)
        #expect(
            requests.contains {
                $0["app"] as? String == "org.example.chess" && $0["subject"] as? String == "_chess._tcp"
            },
            "the other app's pending request was evicted: \(requests.count) requests")
        let lookups = requests.filter { $0["app"] as? String == "org.example.flooder" }
        #expect(lookups.count == 1)
        #expect(lookups.first?["subject"] as? String == "address lookups")
        #expect(lookups.first?["count"] as? Int == 1_100)
        #expect(lookups.first?["latestSubject"] as? String == "flood1099.local.")

        // One question per app: Chess, then Flooder once, however many lookups it made.
        prompt.terminate(grace: 1)
        let questions = prompt.stdout.components(separatedBy: "would like to find and connect").count - 1
        #expect(questions == 2, "\(prompt.stdout.suffix(3_000))")
        #expect(
            prompt.stdout.contains("\u{201C}Chess\u{201D} would like")
                && prompt.stdout.contains("\u{201C}Flooder\u{201D} would like"))
    }
}

/// The longest line of the control protocol (`ControlProtocol.maxLineLength`).
enum ControlLineLimit {
    static let bytes = 512 * 1024
}
