import Foundation
import Testing

@testable import HeraldBroker

@Suite("The SQLite permission store")
struct PermissionStoreTests {
    /// A store in a fresh directory, with a hand-moved clock.
    struct Fixture {
        let directory: String
        let clock = TestClock()
        var path: String { directory + "/" + PermissionStore.defaultFileName }

        init() throws {
            directory = try makeTemporaryDirectory()
        }

        func open(_ options: PermissionStore.Options = .init()) throws(PermissionStoreError) -> PermissionStore {
            try PermissionStore(path: path, options: options, clock: clock.function)
        }

        func cleanUp() { removeDirectory(directory) }
    }

    @Test("A new store is created in WAL mode with the first migration applied and a clean integrity check")
    func creation() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
        let store = try fixture.open()
        #expect(FileManager.default.fileExists(atPath: fixture.path))
        #expect(try store.journalMode() == "wal")
        #expect(try store.appliedMigrations() == ["1-initial", "2-audit-retention"])
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.manifests().isEmpty)
        #expect(try store.snapshot() == PermissionSnapshot())
    }

    @Test("A registered manifest reads back equal, with its times")
    func manifestRoundTrip() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        #expect(try store.register(Apps.ticTacToe, by: "uid 0") == .added)
        #expect(try store.register(Apps.chat, by: "uid 0") == .added)
        let stored = try #require(try store.manifest(Apps.ticTacToe.id))
        #expect(stored.manifest == Apps.ticTacToe)
        #expect(stored.addedAt == fixture.clock.now)
        #expect(stored.updatedAt == fixture.clock.now)
        #expect(try store.manifests().map(\.manifest.id.rawValue) == ["org.example.chat", "org.example.tictactoe"])
        // Ids are looked up ignoring case.
        #expect(try store.manifest(AppID("ORG.example.TICTACTOE"))?.manifest == Apps.ticTacToe)
        #expect(try store.register(Apps.ticTacToe, by: "uid 0") == .unchanged)
    }

    @Test("Grant, deny and reset move an app between the three states, and survive reopening")
    func decisionsSurviveReopen() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        do {
            let store = try fixture.open()
            try store.register(Apps.ticTacToe, by: "uid 0")
            try store.register(Apps.chat, by: "uid 0")
            #expect(try store.decision(for: Apps.ticTacToe.id) == .notDetermined)
            #expect(
                try store.grant(Apps.ticTacToe.id, by: "alice (uid 1000)")
                    == DecisionChange(app: Apps.ticTacToe.id, previous: .notDetermined, current: .granted))
            #expect(try store.deny(Apps.chat.id, by: "uid 0").current == .denied)
        }
        let reopened = try fixture.open()
        #expect(try reopened.decision(for: Apps.ticTacToe.id) == .granted)
        #expect(try reopened.decision(for: Apps.chat.id) == .denied)
        let record = try #require(try reopened.decisionRecord(for: Apps.ticTacToe.id))
        #expect(record.decidedBy == "alice (uid 1000)")
        #expect(record.time == fixture.clock.now)
        #expect(try reopened.snapshot().decisions == [Apps.ticTacToe.id: .granted, Apps.chat.id: .denied])
        #expect(try reopened.reset(Apps.ticTacToe.id, by: "uid 0").previous == .granted)
        #expect(try reopened.decision(for: Apps.ticTacToe.id) == .notDetermined)
        #expect(try reopened.decisionRecord(for: Apps.ticTacToe.id) == nil)
    }

    @Test("Decisions about apps that are not registered are refused")
    func unknownApps() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        #expect(throws: PermissionStoreError.unknownApp("org.example.ghost")) {
            try store.grant(AppID("org.example.ghost"), by: "uid 0")
        }
        #expect(throws: PermissionStoreError.unknownApp("org.example.ghost")) {
            try store.removeApp(AppID("org.example.ghost"), by: "uid 0")
        }
    }

    @Test("A changed manifest keeps the app's decision, and the audit log records what changed")
    func changedManifestKeepsDecision() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.grant(Apps.ticTacToe.id, by: "uid 0")
        fixture.clock.advance(60)
        let changed = try Manifest(
            id: "org.example.tictactoe", name: "Tic Tac Toe", executables: ["/usr/bin/tictactoe"],
            systemdUnits: ["tictactoe.service"], bonjourServices: ["_tictactoe._tcp", "_tictactoe-chat._udp"],
            usageDescription: "Tic Tac Toe looks for players on your local network.")
        #expect(
            try store.register(changed, by: "uid 0") == .updated(summary: "NSBonjourServices: +_tictactoe-chat._udp"))
        #expect(try store.decision(for: Apps.ticTacToe.id) == .granted)
        let stored = try #require(try store.manifest(Apps.ticTacToe.id))
        #expect(stored.manifest == changed)
        #expect(stored.updatedAt.timeIntervalSince(stored.addedAt) == 60)
        let last = try #require(try store.recentAuditLog(1).first)
        #expect(last.event.operation == "app-update")
        #expect(last.event.decision == "granted")
        #expect(
            last.event.detail == "manifest changed by uid 0, decision kept: NSBonjourServices: +_tictactoe-chat._udp")
    }

    @Test("Registering a manifest that claims another app's executable is refused and stores nothing")
    func selectorConflict() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.chat, by: "uid 0")
        let impostor = try Manifest(
            id: "org.example.impostor", name: "Impostor", executables: ["/usr/bin/chat"],
            usageDescription: "x")
        do {
            try store.register(impostor, by: "uid 0")
            Issue.record("registered")
        } catch {
            guard case .selectorConflict(let app, let conflicts) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(app == "org.example.impostor")
            #expect(conflicts.map(\.otherApp) == [Apps.chat.id])
            #expect(error.description.contains("executable /usr/bin/chat is already claimed by org.example.chat"))
        }
        #expect(try store.manifest(impostor.id) == nil)
        #expect(try store.auditLog().map(\.event.operation) == ["app-add"])
    }

    @Test("Removing an app removes its decision and pending requests, and is audited")
    func removal() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.recordPending(pending(.browse))
        #expect(try store.removeApp(Apps.ticTacToe.id, by: "uid 0") == Apps.ticTacToe)
        #expect(try store.pendingRequests().isEmpty)
        #expect(try store.manifests().isEmpty)
        // Registered again, the app starts from not determined.
        try store.register(Apps.ticTacToe, by: "uid 0")
        #expect(try store.decision(for: Apps.ticTacToe.id) == .notDetermined)
        #expect(try store.auditLog().map(\.event.operation) == ["app-add", "app-remove", "app-add"])
    }

    func pending(_ operation: PermissionOperation, subject: String = "_tictactoe._tcp") -> PendingRequest {
        PendingRequest(
            appID: Apps.ticTacToe.id, appName: "Tic Tac Toe", usageDescription: "Finds players.",
            operation: operation, serviceType: "_tictactoe._tcp", subject: subject)
    }

    @Test("Repeated pending requests are deduplicated with a count and first and last times")
    func pendingDeduplication() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        let first = fixture.clock.now
        try store.recordPending(pending(.browse))
        fixture.clock.advance(5)
        try store.recordPending(pending(.register))
        fixture.clock.advance(5)
        let third = try #require(try store.recordPending(pending(.browse)))
        #expect(third.count == 2)
        let requests = try store.pendingRequests()
        #expect(requests.map(\.request.operation) == [.browse, .register])
        #expect(requests[0].count == 2)
        #expect(requests[0].firstSeen == first)
        #expect(requests[0].lastSeen == fixture.clock.now)
        #expect(requests[1].count == 1)
        #expect(requests[0].request == pending(.browse))
    }

    @Test("A decision answers the app's pending requests; after a reset new ones are recorded again")
    func decisionsClearPending() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.recordPending(pending(.browse))
        try store.grant(Apps.ticTacToe.id, by: "uid 0")
        #expect(try store.pendingRequests().isEmpty)
        // A request decided against a stale snapshot is not recorded once the app is decided.
        #expect(try store.recordPending(pending(.browse)) == nil)
        try store.reset(Apps.ticTacToe.id, by: "uid 0")
        #expect(try store.recordPending(pending(.browse))?.count == 1)
    }

    @Test("Pending requests are bounded: the least recently seen go first")
    func pendingBound() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open(.init(pendingRequestLimit: 3))
        try store.register(Apps.ticTacToe, by: "uid 0")
        for index in 0..<5 {
            fixture.clock.advance(1)
            try store.recordPending(pending(.query, subject: "host\(index).local. HINFO"))
        }
        #expect(
            try store.pendingRequests().map(\.request.subject)
                == ["host4.local. HINFO", "host3.local. HINFO", "host2.local. HINFO"])
    }

    @Test("A decision of the policy is recorded in the audit log with its pending request, in one go")
    func recordingDecisions() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        let snapshot = try store.snapshot()
        let parked = policy.decide(browse("_tictactoe._tcp"), caller: ticTacToeBinary, snapshot: snapshot)
        try store.record(parked, caller: ticTacToeBinary)
        let refused = policy.decide(browse("_tictactoe._tcp"), caller: caller("/usr/bin/nosy"), snapshot: snapshot)
        try store.record(refused, caller: caller("/usr/bin/nosy"))
        let pendingNow = try store.pendingRequests()
        #expect(pendingNow.map(\.request) == [parked.pendingRequest])
        let log = try store.auditLog(after: 1)
        #expect(log.map(\.event.reason) == ["not-determined", "unregistered"])
        #expect(log.map(\.event.decision) == ["park", "refuse"])
        #expect(log[0].app == "org.example.tictactoe")
        #expect(log[1].app == nil)
        #expect(log.map(\.sequence) == [2, 3])
    }

    @Test("The audit log keeps only the newest lines, and sequence numbers keep growing")
    func auditBound() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open(.init(auditLogLimit: 5))
        let events = (1...12).map {
            AuditEvent(app: nil, operation: "browse", decision: "refuse", reason: "unregistered", detail: "event \($0)")
        }
        try store.appendAudit(Array(events[0..<7]))
        try store.appendAudit(Array(events[7...]))
        let log = try store.auditLog()
        #expect(log.map(\.event.detail) == (8...12).map { "event \($0)" })
        #expect(log.map(\.sequence) == Array(8...12))
        #expect(try store.auditLog(after: 10).map(\.sequence) == [11, 12])
        #expect(try store.auditLog(after: 0, limit: 2).map(\.sequence) == [8, 9])
        #expect(try store.recentAuditLog(2).map(\.sequence) == [11, 12])
    }

    @Test("Operator actions are audited with who did them and the state before")
    func operatorAudit() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.grant(Apps.ticTacToe.id, by: "alice (uid 1000)")
        try store.deny(Apps.ticTacToe.id, by: "uid 0")
        try store.reset(Apps.ticTacToe.id, by: "uid 0")
        let log = try store.auditLog()
        #expect(log.map(\.event.operation) == ["app-add", "grant", "deny", "reset"])
        #expect(log.map(\.event.decision) == ["not-determined", "granted", "denied", "not-determined"])
        #expect(log[1].event.detail == "by alice (uid 1000); was not-determined")
        #expect(log[3].event.detail == "by uid 0; was denied")
        #expect(log.allSatisfy { $0.event.reason == "operator" && $0.app == "org.example.tictactoe" })
    }

    @Test("A file that is not a store is refused and left exactly as it was")
    func garbageFileUntouched() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        try garbage.write(to: URL(fileURLWithPath: fixture.path))
        let before = try FileManager.default.attributesOfItem(atPath: fixture.path)[.modificationDate] as? Date
        #expect(throws: PermissionStoreError.notAHeraldStore(path: fixture.path, reason: "not an SQLite database")) {
            try fixture.open()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == garbage)
        #expect(try FileManager.default.attributesOfItem(atPath: fixture.path)[.modificationDate] as? Date == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixture.directory) == [PermissionStore.defaultFileName])
    }

    @Test("An empty file is not silently turned into a store")
    func emptyFile() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        #expect(FileManager.default.createFile(atPath: fixture.path, contents: Data()))
        #expect(throws: PermissionStoreError.notAHeraldStore(path: fixture.path, reason: "the file is empty")) {
            try fixture.open()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)).isEmpty)
    }

    @Test("Another program's SQLite database is refused untouched")
    func foreignDatabase() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [fixture.path, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');"]
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { return }
        try sqlite.run()
        sqlite.waitUntilExit()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        do {
            _ = try fixture.open()
            Issue.record("opened another program's database")
        } catch {
            guard case .notAHeraldStore(_, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason == "an SQLite database of another program")
            #expect(error.description.contains("left untouched"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
    }

    @Test("A damaged store is refused as corrupt, not recreated")
    func corruptStore() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        do {
            let store = try fixture.open()
            try store.register(Apps.ticTacToe, by: "uid 0")
            for index in 0..<200 {
                try store.appendAudit([
                    AuditEvent(
                        app: nil, operation: "browse", decision: "refuse",
                        reason: "unregistered", detail: String(repeating: "x", count: 200) + "\(index)")
                ])
            }
            try store.close()
        }
        // Scribble over everything after the first page, keeping the header and the schema page.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        #expect(bytes.count > pageSize * 3)
        for index in pageSize..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 151) }
        try bytes.write(to: URL(fileURLWithPath: fixture.path))
        do {
            _ = try fixture.open()
            Issue.record("opened a damaged store")
        } catch {
            guard case .corrupt = error else {
                Issue.record("expected corrupt, got \(error)")
                return
            }
            #expect(error.description.contains("left untouched"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == bytes)
    }

    @Test("A store written by a newer Herald, with a migration this one does not know, is refused untouched")
    func newerSchema() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { return }
        do {
            let store = try fixture.open()
            try store.register(Apps.ticTacToe, by: "uid 0")
            try store.close()
        }
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [fixture.path, "INSERT INTO grdb_migrations VALUES ('2-from-the-future')"]
        try sqlite.run()
        sqlite.waitUntilExit()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        #expect(throws: PermissionStoreError.newerSchema(path: fixture.path, unknownMigrations: ["2-from-the-future"]))
        {
            try fixture.open()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
    }

    @Test("A missing state directory and a directory in the file's place are reported clearly")
    func badLocations() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        #expect(throws: PermissionStoreError.directoryMissing(fixture.directory + "/nope")) {
            try PermissionStore(path: fixture.directory + "/nope/permissions.sqlite")
        }
        try FileManager.default.createDirectory(atPath: fixture.path, withIntermediateDirectories: false)
        #expect(throws: PermissionStoreError.unreadable(path: fixture.path, reason: "it is a directory")) {
            try fixture.open()
        }
    }

    @Test("Reopening a store keeps everything, and the integrity check stays ok")
    func reopenKeepsEverything() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        do {
            let store = try fixture.open()
            try store.register(Apps.ticTacToe, by: "uid 0")
            try store.register(Apps.scanner, by: "uid 0")
            try store.recordPending(pending(.browse))
            try store.grant(Apps.scanner.id, by: "uid 0")
        }
        let store = try PermissionStore(stateDirectory: fixture.directory)
        #expect(try store.manifests().map(\.manifest) == [Apps.scanner, Apps.ticTacToe])
        #expect(try store.pendingRequests().map(\.request) == [pending(.browse)])
        #expect(try store.snapshot().decision(for: Apps.scanner.id) == .granted)
        #expect(try store.auditLog().count == 3)
        #expect(try store.appliedMigrations() == ["1-initial", "2-audit-retention"])
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test("A grant is on disk when the call returns: a second connection sees it at once")
    func grantIsCommitted() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.grant(Apps.ticTacToe.id, by: "uid 0")
        // Without closing the first store, as after a kill -9.
        let other = try fixture.open()
        #expect(try other.decision(for: Apps.ticTacToe.id) == .granted)
    }

    @Test("The snapshot drives the policy: a grant in the store turns a parked request into an allowed one")
    func snapshotDrivesPolicy() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        let request = browse("_tictactoe._tcp")
        #expect(policy.decide(request, caller: ticTacToeBinary, snapshot: try store.snapshot()).outcome == .park)
        try store.grant(Apps.ticTacToe.id, by: "uid 0")
        #expect(policy.decide(request, caller: ticTacToeBinary, snapshot: try store.snapshot()).outcome == .allow)
        try store.deny(Apps.ticTacToe.id, by: "uid 0")
        #expect(policy.decide(request, caller: ticTacToeBinary, snapshot: try store.snapshot()).reason == .denied)
    }

    @Test("The store's connection runs with WAL, full synchronous commits, foreign keys and a one-second lock wait")
    func connectionSettings() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        #expect(try store.setting("journal_mode") == "wal")
        #expect(try store.setting("synchronous") == "2")  // FULL
        #expect(try store.setting("foreign_keys") == "1")
        #expect(try store.setting("busy_timeout") == "1000")
        #expect(try store.setting("cache_size") == "-64")
    }
}
