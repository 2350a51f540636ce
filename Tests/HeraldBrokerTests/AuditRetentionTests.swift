import Foundation
import HeraldBroker
import HeraldWire
import Testing

/// The audit log and the pending requests under a flood, on a real SQLite store: operator actions are kept apart
/// from the lines of requests, one user's decisions are folded per reason and window, pages of the log are cut by
/// what a reader takes, and one app's requests cannot evict another's.
@Suite("Audit retention and pending request bounds")
struct AuditRetentionTests {
    typealias Fixture = PermissionStoreTests.Fixture

    /// `count` refusals of distinct service types by an unregistered program of `uid`, decided by the policy.
    func refusals(_ count: Int, uid: UInt32 = 1000, from start: Int = 0)
        -> [(decision: PermissionDecision, caller: CallerIdentity)]
    {
        let nosy = caller("/usr/bin/nosy", uid: uid, groups: [uid])
        return (start..<start + count).map { index in
            (policy.decide(browse("_t\(index)._tcp"), caller: nosy, snapshot: PermissionSnapshot()), nosy)
        }
    }

    /// Records `batch` in transactions of 500, as the daemon records a burst turn by turn.
    func record(_ batch: [(decision: PermissionDecision, caller: CallerIdentity)], in store: PermissionStore) throws {
        var start = 0
        while start < batch.count {
            let end = min(start + 500, batch.count)
            try store.record(Array(batch[start..<end]))
            start = end
        }
    }

    @Test("10,500 refusals of distinct types by one user leave every operator action in the log, in 101 lines")
    func floodKeepsOperatorActions() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        try store.grant(Apps.ticTacToe.id, by: "uid 0")
        try record(refusals(10_500), in: store)
        let log = try store.auditLog()
        #expect(log.filter { $0.kind == .operatorAction }.map(\.event.operation) == ["app-add", "grant"])
        let requests = log.filter { $0.kind == .request }
        #expect(requests.count == 101)
        #expect(requests.filter { $0.count == 1 }.count == 100)
        let folded = try #require(requests.last)
        #expect(folded.event.operation == "folded" && folded.count == 10_400 && folded.uid == 1000)
        #expect(folded.event.reason == "unregistered" && folded.event.decision == "refuse")
        #expect(folded.event.detail.hasPrefix("uid 1000: 10400 more decisions with this reason within 60 s"))
        #expect(folded.event.detail.contains("browse _t10499._tcp"))
        // The folded line stands for every decision it counts: nothing is lost from the total.
        #expect(requests.map(\.count).reduce(0, +) == 10_500)
    }

    @Test("Without folding, request lines are trimmed to their own bound and operator actions to theirs")
    func retentionByKind() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open(.init(auditLogLimit: 1_000, operatorLogLimit: 30, auditLinesPerUser: 1_000_000))
        try store.register(Apps.ticTacToe, by: "uid 0")
        for round in 0..<20 {
            try store.grant(Apps.ticTacToe.id, by: "uid 0")
            // Distinct users, so that folding would not help either.
            for uid in 0..<5 { try record(refusals(100, uid: 2000 + UInt32(uid), from: round * 100), in: store) }
            try store.reset(Apps.ticTacToe.id, by: "uid 0")
        }
        let log = try store.auditLog()
        let operatorActions = log.filter { $0.kind == .operatorAction }
        // 41 operator actions were made; the newest 30 are kept, whatever the 10,000 request lines did.
        #expect(operatorActions.count == 30)
        #expect(operatorActions.last?.event.operation == "reset")
        #expect(log.filter { $0.kind == .request }.count == 1_000)
        #expect(log.last?.event.operation == "reset")
        // Sequence numbers keep growing across both kinds.
        #expect(log.map(\.sequence) == log.map(\.sequence).sorted())
    }

    @Test("Folding is per user and reason; the folded line moves to the end as it grows; a new window starts afresh")
    func foldingPerUserAndWindow() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open(.init(auditLinesPerUser: 5, auditFoldWindow: 60))
        try store.register(Apps.ticTacToe, by: "uid 0")
        let snapshot = try store.snapshot()
        try store.record(refusals(20, uid: 1000))
        try store.record(refusals(3, uid: 1001))
        // A parked request of the same user is another reason: it has its own five.
        try store.record([
            (
                policy.decide(browse("_tictactoe._tcp"), caller: ticTacToeBinary, snapshot: snapshot),
                ticTacToeBinary
            )
        ])
        var log = try store.auditLog()
        #expect(log.filter { $0.uid == 1000 && $0.event.reason == "unregistered" }.map(\.count) == [1, 1, 1, 1, 1, 15])
        #expect(log.filter { $0.uid == 1001 }.map(\.count) == [1, 1, 1])
        #expect(log.filter { $0.event.reason == "not-determined" }.map(\.count) == [1])
        let firstFolded = try #require(log.first { $0.event.operation == "folded" })

        // More of the same within the window: the folded line is written again after the newer lines, counting all.
        fixture.clock.advance(30)
        try store.record(refusals(10, uid: 1000, from: 100))
        log = try store.auditLog()
        let folded = log.filter { $0.event.operation == "folded" }
        #expect(folded.count == 1)
        #expect(folded.first?.count == 25 && folded.first?.sequence ?? 0 > firstFolded.sequence)
        #expect(log.last == folded.first)
        #expect(folded.first?.event.detail.contains("browse _t109._tcp") == true)

        // After the window, five are written one by one again; the old folded line stays as the record of its window.
        fixture.clock.advance(31)
        try store.record(refusals(7, uid: 1000, from: 200))
        log = try store.auditLog()
        #expect(
            log.filter { $0.uid == 1000 && $0.event.reason == "unregistered" }.map(\.count)
                == [1, 1, 1, 1, 1, 25, 1, 1, 1, 1, 1, 2])
    }

    @Test("The folding state survives reopening the store, so a restart does not reset a user's window")
    func foldingSurvivesReopen() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        do {
            let store = try fixture.open(.init(auditLinesPerUser: 5))
            try store.record(refusals(8))
            try store.close()
        }
        let store = try fixture.open(.init(auditLinesPerUser: 5))
        try store.record(refusals(4, from: 8))
        #expect(try store.auditLog().map(\.count) == [1, 1, 1, 1, 1, 7])
    }

    @Test("Pages of the log end where the reader stops taking lines, and always hold at least one")
    func paging() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        let events = (1...10).map {
            AuditEvent(
                app: nil, operation: "browse", decision: "refuse", reason: "unregistered",
                detail: String(repeating: "x", count: $0 * 100))
        }
        try store.appendAudit(events)
        var bytes = 0
        let page = try store.auditLog(
            after: 0, limit: 100,
            while: { record in
                bytes += record.event.detail.utf8.count
                return bytes <= 1_000
            })
        #expect(page.records.map(\.sequence) == [1, 2, 3, 4] && page.more)
        let last = try store.auditLog(after: 8, limit: 100, while: { _ in false })
        #expect(last.records.map(\.sequence) == [9] && last.more)
        let end = try store.auditLog(after: 9, limit: 100, while: { _ in false })
        #expect(end.records.map(\.sequence) == [10] && !end.more)
        let limited = try store.auditLog(after: 0, limit: 2, while: { _ in true })
        #expect(limited.records.map(\.sequence) == [1, 2] && !limited.more)
        #expect(try store.auditSequence(beforeNewest: 3) == 7)
        #expect(try store.auditSequence(beforeNewest: 50) == 0)
    }

    @Test("A detail longer than 16 KiB is cut at a character boundary and marked")
    func longDetail() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.appendAudit([
            AuditEvent(
                app: nil, operation: "browse", decision: "refuse", reason: "unregistered",
                detail: String(repeating: "é", count: 20_000))
        ])
        let detail = try #require(try store.auditLog().first?.event.detail)
        #expect(detail.utf8.count <= 16 * 1024 && detail.hasSuffix("…"))
        #expect(detail.dropLast().allSatisfy { $0 == "é" })
    }

    @Test("A store of the first schema is migrated: operator actions are told apart and address lookups folded")
    func migrationFromFirstSchema() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { return }
        let manifest = Apps.ticTacToe.jsonText.replacingOccurrences(of: "'", with: "''")
        let sql = """
            PRAGMA application_id = 1213353028;
            PRAGMA journal_mode = WAL;
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('1-initial');
            CREATE TABLE manifest (app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE, manifest_json TEXT NOT NULL,
                added_at REAL NOT NULL, updated_at REAL NOT NULL);
            CREATE TABLE decision (app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE
                    REFERENCES manifest(app_id) ON DELETE CASCADE,
                decision TEXT NOT NULL CHECK (decision IN ('granted', 'denied')), decided_at REAL NOT NULL,
                decided_by TEXT NOT NULL);
            CREATE TABLE pending_request (id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL COLLATE NOCASE REFERENCES manifest(app_id) ON DELETE CASCADE,
                app_name TEXT NOT NULL, usage_description TEXT NOT NULL, operation TEXT NOT NULL, service_type TEXT,
                subject TEXT NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
                count INTEGER NOT NULL CHECK (count >= 1), UNIQUE (app_id, operation, subject));
            CREATE INDEX pending_request_by_last_seen ON pending_request(last_seen);
            CREATE TABLE audit_log (sequence INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, app_id TEXT,
                operation TEXT NOT NULL, service_type TEXT, decision TEXT NOT NULL, reason TEXT NOT NULL,
                detail TEXT NOT NULL);
            INSERT INTO manifest VALUES ('org.example.tictactoe', '\(manifest)', 1, 1);
            INSERT INTO audit_log (time, app_id, operation, decision, reason, detail) VALUES
                (1, 'org.example.tictactoe', 'app-add', 'not-determined', 'operator', 'registered'),
                (2, NULL, 'browse', 'refuse', 'unregistered', 'browse _a._tcp by uid 1000'),
                (3, 'org.example.tictactoe', 'grant', 'granted', 'operator', 'by uid 0; was not-determined'),
                (4, NULL, 'browse', 'refuse', 'unregistered', 'browse _b._tcp by uid 1000'),
                (5, 'org.example.tictactoe', 'reset', 'not-determined', 'operator', 'by uid 0; was granted');
            INSERT INTO pending_request (app_id, app_name, usage_description, operation, service_type, subject,
                                         first_seen, last_seen, count) VALUES
                ('org.example.tictactoe', 'Tic Tac Toe', 'Finds players.', 'browse', '_tictactoe._tcp',
                 '_tictactoe._tcp', 1, 5, 2),
                ('org.example.tictactoe', 'Tic Tac Toe', 'Finds players.', 'address-lookup', NULL, 'a.local.', 2, 3, 4),
                ('org.example.tictactoe', 'Tic Tac Toe', 'Finds players.', 'address-lookup', NULL, 'b.local.', 1, 6, 1);
            """
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [fixture.path, sql]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)

        let store = try fixture.open(.init(auditLogLimit: 2))
        #expect(try store.appliedMigrations() == ["1-initial", "2-audit-retention"])
        #expect(try store.integrityCheck() == ["ok"])
        let log = try store.auditLog()
        #expect(log.filter { $0.kind == .operatorAction }.map(\.sequence) == [1, 3, 5])
        #expect(log.filter { $0.kind == .request }.map(\.sequence) == [2, 4])
        // The bound of request lines counts the lines it found: one more request line drops the oldest of them only.
        try store.record(refusals(1))
        #expect(try store.auditLog().map(\.sequence) == [1, 3, 4, 5, 6])
        let pending = try store.pendingRequests()
        #expect(pending.map(\.request.subject) == [PendingRequest.addressLookupsSubject, "_tictactoe._tcp"])
        #expect(pending.first?.count == 5)
        #expect(pending.first?.firstSeen == Date(timeIntervalSince1970: 1))
        #expect(pending.first?.lastSeen == Date(timeIntervalSince1970: 6))
    }

    // MARK: - Pending requests

    @Test("An app's address lookups are one pending request, with a count and the latest name")
    func addressLookupsFold() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open()
        try store.register(Apps.ticTacToe, by: "uid 0")
        let snapshot = try store.snapshot()
        let lookups = (0..<1_100).map { index in
            (policy.decide(lookup("host\(index).local."), caller: ticTacToeBinary, snapshot: snapshot), ticTacToeBinary)
        }
        let first = try store.record(Array(lookups[..<600]))
        #expect(first.count == 1 && first.first?.isNew == true && first.first?.count == 600)
        let second = try store.record(Array(lookups[600...]))
        #expect(second.count == 1 && second.first?.isNew == false)
        let pending = try store.pendingRequests()
        #expect(pending.count == 1)
        #expect(pending.first?.request.operation == .addressLookup)
        #expect(pending.first?.request.subject == PendingRequest.addressLookupsSubject)
        #expect(pending.first?.request.latestSubject == "host1099.local.")
        #expect(pending.first?.count == 1_100)
    }

    @Test("One app's flood of distinct requests never evicts another app's pending request")
    func perAppCap() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let store = try fixture.open(.init(pendingRequestLimit: 5, pendingRequestsPerApp: 4))
        for app in [Apps.ticTacToe, Apps.chat, Apps.scanner] { try store.register(app, by: "uid 0") }
        let snapshot = try store.snapshot()
        let chat = caller("/usr/bin/chat")
        let scanner = caller("/usr/bin/scanner")
        try store.record(policy.decide(browse("_chat._tcp"), caller: chat, snapshot: snapshot), caller: chat)
        // The scanner has the entitlement: each arbitrary name is a request of its own.
        try store.record(
            (0..<1_000).map {
                (policy.decide(query("thing\($0).local.", .hinfo), caller: scanner, snapshot: snapshot), scanner)
            })
        var pending = try store.pendingRequests()
        #expect(pending.filter { $0.request.appID == Apps.scanner.id }.count == 4)
        #expect(pending.filter { $0.request.appID == Apps.chat.id }.map(\.request.subject) == ["_chat._tcp"])

        // A full list: a newcomer's first request takes the place of the app holding the most.
        fixture.clock.advance(1)
        try store.record(
            policy.decide(browse("_tictactoe._tcp"), caller: ticTacToeBinary, snapshot: snapshot),
            caller: ticTacToeBinary)
        pending = try store.pendingRequests()
        #expect(pending.count == 5)
        #expect(pending.filter { $0.request.appID == Apps.scanner.id }.count == 3)
        // Its next requests take the place of its own.
        for request in [register("_tictactoe._tcp"), lookup("a.local."), lookup("b.local.")] {
            fixture.clock.advance(1)
            try store.record(
                policy.decide(request, caller: ticTacToeBinary, snapshot: snapshot), caller: ticTacToeBinary)
        }
        pending = try store.pendingRequests()
        #expect(pending.count == 5)
        #expect(pending.filter { $0.request.appID == Apps.chat.id }.count == 1)
        #expect(pending.filter { $0.request.appID == Apps.scanner.id }.count == 3)
        #expect(
            pending.first?.request.appID == Apps.ticTacToe.id
                && pending.first?.request.subject == PendingRequest.addressLookupsSubject
                && pending.first?.count == 2)
    }
}
