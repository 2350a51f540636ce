import CSQLite
import Foundation
import Testing

@testable import HeraldBroker

/// The thin layer over SQLite's C API that the permission store is written on.
@Suite("SQLite through its C API")
struct SQLiteTests {
    /// A connection to a new database file in a fresh directory.
    struct Fixture {
        let directory: String
        let db: SQLiteConnection
        var path: String { directory + "/test.sqlite" }

        init() throws {
            directory = try makeTemporaryDirectory()
            db = try SQLiteConnection(path: directory + "/test.sqlite", mode: .readWriteCreate)
        }

        func cleanUp() {
            try? db.close()
            removeDirectory(directory)
        }
    }

    @Test("Values of every storage class bind and read back with their types, NULL as nil")
    func bindAndRead() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
        let text = "grüße, 世界 \u{0} and more"
        try db.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [Int64.min, 0.1, text, SQLiteValue.blob([0, 1, 255]), String?.none])
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [42, -2.5, "", SQLiteValue.blob([]), "x"])
        let rows = try db.rows("SELECT i, r, s, n, typeof(s) AS kind, length(b) AS bytes FROM t ORDER BY rowid") {
            row in
            (row.int64("i"), row.double("r"), row.text("s"), row.optionalText("n"), row.text("kind"), row.int("bytes"))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == Int64.min && rows[0].1 == 0.1 && rows[0].2 == text && rows[0].3 == nil)
        #expect(rows[0].5 == 3)
        // An empty string is text, not NULL.
        #expect(rows[1].0 == 42 && rows[1].1 == -2.5 && rows[1].2 == "" && rows[1].4 == "text" && rows[1].3 == "x")
        #expect(try db.firstRow("SELECT count(*) FROM t WHERE s IS NULL") { $0.int(at: 0) } == 0)
    }

    @Test("A statement refuses the wrong number of arguments and a second statement in its SQL")
    func misuse() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        try db.execute("CREATE TABLE t (a INTEGER)")
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?)", [1, 2]) }
        do {
            _ = try db.prepare("INSERT INTO t VALUES (1); DROP TABLE t")
            Issue.record("prepared two statements as one")
        } catch {
            #expect(error.code == SQLITE_MISUSE && error.message == "more than one statement")
        }
        #expect(try db.texts("SELECT name FROM sqlite_master") == ["t"])
        #expect(try db.firstRow("SELECT count(*) FROM t") { $0.int(at: 0) } == 0)
    }

    @Test("Errors carry SQLite's result code, extended code and message")
    func errors() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        do {
            try db.execute("SELEKT 1")
            Issue.record("ran a syntax error")
        } catch {
            #expect(error.code == SQLITE_ERROR)
            #expect(error.message.contains("syntax error"))
            #expect(error.sql == "SELEKT 1")
        }
        try db.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
        try db.execute("INSERT INTO t VALUES (?, ?)", [1, "one"])
        do {
            try db.execute("INSERT INTO t VALUES (?, ?)", [1, "again"])
            Issue.record("inserted a duplicate key")
        } catch {
            #expect(error.code == SQLITE_CONSTRAINT)
            #expect(error.extendedCode == SQLITE_CONSTRAINT | 6 << 8)  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.message == "UNIQUE constraint failed: t.a")
        }
        // Double-quoted strings are identifiers only.
        try db.refuseDoubleQuotedStrings()
        #expect(throws: SQLiteError.self) { try db.execute("SELECT \"no such column\" FROM t") }
    }

    @Test("A transaction commits what its body did, and rolls all of it back when the body throws")
    func transactions() throws {
        struct Stop: Error {}
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        try db.execute("CREATE TABLE t (a INTEGER)")
        let inserted = try db.transaction(.immediate) {
            try db.execute("INSERT INTO t VALUES (?)", [1])
            #expect(db.isInTransaction)
            return db.lastInsertedRowID
        }
        #expect(inserted == 1 && !db.isInTransaction)
        #expect(throws: Stop.self) {
            try db.transaction(.immediate) {
                try db.execute("INSERT INTO t VALUES (?)", [2])
                try db.execute("INSERT INTO t VALUES (?)", [3])
                throw Stop()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.rows("SELECT a FROM t") { $0.int(at: 0) } == [1])
        // Another connection sees only what was committed.
        let other = try SQLiteConnection(path: fixture.path, mode: .readOnly)
        #expect(try other.rows("SELECT a FROM t") { $0.int(at: 0) } == [1])
    }

    @Test("A cached statement is compiled once and runs again after a partial read")
    func cachedStatements() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        try db.execute(
            "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)")
        let sql = "SELECT a FROM t WHERE a >= ? ORDER BY a"
        let statement = try db.cachedStatement(sql)
        #expect(try db.cachedStatement(sql) === statement)
        var seen: [Int] = []
        try statement.forEachRow([1]) { row in
            seen.append(row.int(at: 0))
            return seen.count < 2
        }
        #expect(seen == [1, 2])
        // The statement was reset: it holds no read lock, and runs from the start with new arguments.
        #expect(try statement.rows([2]) { $0.int(at: 0) } == [2, 3])
        try db.execute("DROP TABLE t")
        #expect(try db.texts("SELECT name FROM sqlite_master").isEmpty)
    }

    @Test("A statement with RETURNING runs to its end, and the rows changed are counted")
    func returning() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        try db.execute("CREATE TABLE t (a INTEGER, b INTEGER)")
        try db.execute("INSERT INTO t VALUES (1, 10); INSERT INTO t VALUES (2, 20); INSERT INTO t VALUES (3, 30)")
        let first = try db.cachedStatement("UPDATE t SET b = b + 1 WHERE a >= ? RETURNING b").firstRow([2]) {
            $0.int(at: 0)
        }
        #expect(first == 21 || first == 31)
        #expect(db.changes == 2)
        #expect(try db.rows("SELECT b FROM t ORDER BY a") { $0.int(at: 0) } == [10, 21, 31])
    }

    @Test("A closed connection refuses every call, naming why")
    func closed() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        let db = fixture.db
        _ = try db.cachedStatement("SELECT 1")
        try db.close()
        do {
            try db.execute("SELECT 1")
            Issue.record("ran a statement on a closed connection")
        } catch {
            #expect(error.code == SQLITE_MISUSE && error.message == "the connection is closed")
        }
    }

    @Test("Opening a missing file read-only fails with SQLITE_CANTOPEN and creates nothing")
    func missingFile() throws {
        let fixture = try Fixture()
        defer { fixture.cleanUp() }
        do {
            _ = try SQLiteConnection(path: fixture.directory + "/missing.sqlite", mode: .readOnly)
            Issue.record("opened a missing file")
        } catch {
            #expect(error.code == SQLITE_CANTOPEN)
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/missing.sqlite"))
    }
}
