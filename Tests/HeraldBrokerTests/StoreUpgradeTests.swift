import Foundation
import Testing

@testable import HeraldBroker

/// Stores written by the heraldd releases that kept the store through the GRDB library open with all their data.
/// The fixture is the file such a heraldd leaves, laid out by raw SQL: the schema as `sqlite3 .dump` shows it
/// for a store of migrations `1-initial` and `2-audit-retention`, with two apps, a grant, a pending request and
/// four audit lines, as that version recorded them.
@Suite("Stores of earlier releases")
struct StoreUpgradeTests {
    typealias Fixture = PermissionStoreTests.Fixture

    static let ticTacToeJSON = """
        {
          "id": "org.example.tictactoe",
          "name": "Tic Tac Toe",
          "executables": ["/usr/bin/tictactoe"],
          "systemdUnits": ["tictactoe.service"],
          "NSBonjourServices": ["_tictactoe._tcp"],
          "NSLocalNetworkUsageDescription": "Tic Tac Toe looks for players on your local network."
        }

        """
    static let chatJSON = """
        {
          "id": "org.example.chat",
          "name": "Chat",
          "executables": ["/usr/bin/chat"],
          "NSBonjourServices": ["_chat._tcp"],
          "NSLocalNetworkUsageDescription": "Chat finds friends."
        }

        """

    /// The store as the GRDB-based heraldd wrote it.
    static let grdbStore = """
        PRAGMA application_id = 1213353028;
        PRAGMA journal_mode = WAL;
        BEGIN TRANSACTION;
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES('1-initial');
        INSERT INTO grdb_migrations VALUES('2-audit-retention');
        CREATE TABLE manifest (
            app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
            manifest_json TEXT NOT NULL,
            added_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        INSERT INTO manifest VALUES('org.example.tictactoe', :tictactoe, 1700000000.0, 1700000000.0);
        INSERT INTO manifest VALUES('org.example.chat', :chat, 1700000000.0, 1700000000.0);
        CREATE TABLE decision (
            app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE
                REFERENCES manifest(app_id) ON DELETE CASCADE,
            decision TEXT NOT NULL CHECK (decision IN ('granted', 'denied')),
            decided_at REAL NOT NULL,
            decided_by TEXT NOT NULL
        );
        INSERT INTO decision VALUES('org.example.chat','granted',1700000000.0,'alice (uid 1000)');
        CREATE TABLE pending_request (
            id INTEGER PRIMARY KEY,
            app_id TEXT NOT NULL COLLATE NOCASE REFERENCES manifest(app_id) ON DELETE CASCADE,
            app_name TEXT NOT NULL,
            usage_description TEXT NOT NULL,
            operation TEXT NOT NULL,
            service_type TEXT,
            subject TEXT NOT NULL,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL,
            count INTEGER NOT NULL CHECK (count >= 1), latest_subject TEXT,
            UNIQUE (app_id, operation, subject)
        );
        INSERT INTO pending_request VALUES(1,'org.example.tictactoe','Tic Tac Toe','Finds players.','browse',
            '_tictactoe._tcp','_tictactoe._tcp',1700000000.0,1700000000.0,1,NULL);
        CREATE TABLE audit_log (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            time REAL NOT NULL,
            app_id TEXT,
            operation TEXT NOT NULL,
            service_type TEXT,
            decision TEXT NOT NULL,
            reason TEXT NOT NULL,
            detail TEXT NOT NULL
        , class INTEGER NOT NULL DEFAULT 1 CHECK (class IN (0, 1)), uid INTEGER, count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1));
        INSERT INTO audit_log VALUES(1,1700000000.0,'org.example.tictactoe','app-add',NULL,'not-determined','operator',
            'registered "Tic Tac Toe" by uid 0; types: _tictactoe._tcp',0,NULL,1);
        INSERT INTO audit_log VALUES(2,1700000000.0,'org.example.chat','app-add',NULL,'not-determined','operator',
            'registered "Chat" by uid 0; types: _chat._tcp',0,NULL,1);
        INSERT INTO audit_log VALUES(3,1700000000.0,'org.example.chat','grant',NULL,'granted','operator',
            'by alice (uid 1000); was not-determined',0,NULL,1);
        INSERT INTO audit_log VALUES(4,1700000000.0,NULL,'browse',NULL,'refuse','unregistered',
            'browse _x._tcp by uid 1000',1,NULL,1);
        CREATE TABLE audit_retention (
            class INTEGER NOT NULL PRIMARY KEY,
            lines INTEGER NOT NULL
        );
        INSERT INTO audit_retention VALUES(0,3);
        INSERT INTO audit_retention VALUES(1,1);
        CREATE TABLE audit_fold (
            uid INTEGER NOT NULL,
            reason TEXT NOT NULL,
            window_start REAL NOT NULL,
            lines INTEGER NOT NULL,
            folded INTEGER NOT NULL,
            line_sequence INTEGER,
            PRIMARY KEY (uid, reason)
        );
        DELETE FROM sqlite_sequence;
        INSERT INTO sqlite_sequence VALUES('audit_log',4);
        CREATE INDEX pending_request_by_last_seen ON pending_request(last_seen);
        CREATE INDEX audit_log_by_class ON audit_log(class, sequence);
        CREATE INDEX pending_request_by_app ON pending_request(app_id, last_seen);
        COMMIT;
        """

    /// Writes the GRDB-era store at the fixture's path.
    static func writeGRDBStore(_ fixture: Fixture) throws {
        let db = try SQLiteConnection(path: fixture.path, mode: .readWriteCreate)
        var sql = grdbStore
        for (name, json) in [(":tictactoe", ticTacToeJSON), (":chat", chatJSON)] {
            sql = sql.replacingOccurrences(of: name, with: "'" + json.replacingOccurrences(of: "'", with: "''") + "'")
        }
        try db.execute(sql)
        try db.close()
    }

    @Test("A store written by the GRDB-based heraldd opens with every app, decision, request and audit line")
    func grdbStoreOpens() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try Self.writeGRDBStore(fixture)

        let store = try fixture.open()
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.journalMode() == "wal")
        #expect(try store.appliedMigrations() == ["1-initial", "2-audit-retention"])

        let manifests = try store.manifests()
        #expect(manifests.map(\.manifest.id.rawValue) == ["org.example.chat", "org.example.tictactoe"])
        #expect(manifests.last?.manifest == Apps.ticTacToe)
        #expect(manifests.allSatisfy { $0.addedAt == Date(timeIntervalSince1970: 1_700_000_000) })

        let grant = try #require(try store.decisionRecord(for: AppID("org.example.chat")))
        #expect(grant.decision == .granted && grant.decidedBy == "alice (uid 1000)")
        #expect(grant.time == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try store.decision(for: Apps.ticTacToe.id) == .notDetermined)

        let pending = try store.pendingRequests()
        #expect(
            pending.map(\.request) == [
                PendingRequest(
                    appID: Apps.ticTacToe.id, appName: "Tic Tac Toe", usageDescription: "Finds players.",
                    operation: .browse,
                    serviceType: "_tictactoe._tcp", subject: "_tictactoe._tcp")
            ])

        let log = try store.auditLog()
        #expect(log.map(\.sequence) == [1, 2, 3, 4])
        #expect(log.map(\.kind) == [.operatorAction, .operatorAction, .operatorAction, .request])
        #expect(log[2].event.detail == "by alice (uid 1000); was not-determined")
        #expect(log[3].app == nil && log[3].event.reason == "unregistered" && log[3].uid == nil)
    }

    @Test(
        "A GRDB-era store keeps working: sequence numbers go on, bounds count the old lines, nothing is migrated again")
    func grdbStoreKeepsWorking() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try Self.writeGRDBStore(fixture)
        do {
            // Three request lines at most: the one found and two new ones fit, a third pushes the oldest out.
            let store = try fixture.open(.init(auditLogLimit: 3))
            try store.grant(Apps.ticTacToe.id, by: "uid 0")
            #expect(try store.pendingRequests().isEmpty)
            try store.appendAudit(
                (1...3).map {
                    AuditEvent(
                        app: nil, operation: "browse", decision: "refuse", reason: "unregistered", detail: "new \($0)")
                })
            let log = try store.auditLog()
            #expect(log.map(\.sequence) == [1, 2, 3, 5, 6, 7, 8])
            #expect(log.filter { $0.kind == .request }.map(\.event.detail) == ["new 1", "new 2", "new 3"])
            try store.close()
        }
        // The migrations table is as an older heraldd expects it: both migrations, nothing else, so that it opens
        // the store again (and a newer heraldd's store is refused by it as newer).
        let db = try SQLiteConnection(path: fixture.path, mode: .readOnly)
        #expect(
            try db.texts("SELECT identifier FROM grdb_migrations ORDER BY identifier")
                == ["1-initial", "2-audit-retention"])
        #expect(
            try db.texts("SELECT sql FROM sqlite_master WHERE name = 'grdb_migrations'")
                == ["CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)"])
        #expect(
            try db.texts("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                == [
                    "audit_fold", "audit_log", "audit_retention", "decision", "grdb_migrations", "manifest",
                    "pending_request", "sqlite_sequence",
                ])
        try db.close()
        let reopened = try fixture.open()
        #expect(try reopened.decision(for: Apps.ticTacToe.id) == .granted)
        #expect(try reopened.integrityCheck() == ["ok"])
    }

    @Test("A new store records its migrations in the same table and layout as the GRDB-based heraldd did")
    func newStoreLayout() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        try fixture.open().close()
        let db = try SQLiteConnection(path: fixture.path, mode: .readOnly)
        #expect(
            try db.texts("SELECT identifier FROM grdb_migrations ORDER BY identifier")
                == ["1-initial", "2-audit-retention"])
        #expect(try db.firstRow("PRAGMA application_id") { $0.int64(at: 0) } == 0x4852_4C44)
        // Every table and index as the GRDB-era fixture has them, with the same SQL.
        let grdb = try Fixture()
        defer { grdb.cleanUp() }
        try Self.writeGRDBStore(grdb)
        let old = try SQLiteConnection(path: grdb.path, mode: .readOnly)
        let schema =
            "SELECT type, name, replace(replace(sql, char(10), ' '), '  ', ' ') FROM sqlite_master ORDER BY name"
        let normalise: (SQLiteRow) -> String = { row in
            row.text(at: 0) + " " + row.text(at: 1) + ": "
                + row.text(at: 2).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        #expect(try db.rows(schema, [], normalise) == old.rows(schema, [], normalise))
    }
}
