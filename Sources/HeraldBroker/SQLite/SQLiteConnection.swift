import CSQLite

/// One connection to an SQLite database file, through SQLite's C API, with extended result codes on. It has one
/// owner at a time (the permission store keeps it under a lock): SQLite is opened without its own mutexes.
final class SQLiteConnection {
    /// How the file is opened.
    enum Mode {
        /// Reading only; the file must exist.
        case readOnly
        /// Reading and writing; the file must exist.
        case readWrite
        /// Reading and writing; a missing file is created.
        case readWriteCreate
    }

    /// The database file.
    let path: String
    /// Nil once closed.
    private var handle: OpaquePointer?
    /// The statements kept compiled, by SQL.
    private var cache: [String: SQLiteStatement] = [:]

    init(path: String, mode: Mode) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let error = SQLiteError(code: code == SQLITE_OK ? SQLITE_NOMEM : code, connection: connection)
            sqlite3_close_v2(connection)
            throw error
        }
        sqlite3_extended_result_codes(connection, 1)
        self.path = path
        self.handle = connection
    }

    deinit {
        cache.removeAll()
        // The _v2 close waits for statements still held elsewhere to be finalized.
        if let handle { sqlite3_close_v2(handle) }
    }

    /// Closes the connection, finalizing its cached statements; later calls fail. Statements prepared with
    /// ``prepare(_:)`` must have been released.
    func close() throws(SQLiteError) {
        guard let handle else { return }
        cache.removeAll()
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle) }
        self.handle = nil
    }

    /// The connection's handle, or the error every call on a closed connection gets.
    private func open() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        return handle
    }

    // MARK: - Settings

    /// How long a statement waits for another connection's lock before it fails with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let code = sqlite3_busy_timeout(try open(), milliseconds)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle) }
    }

    /// Refuses "double-quoted" string literals, which SQLite otherwise takes for a misspelt column name.
    func refuseDoubleQuotedStrings() throws(SQLiteError) {
        let code = csqlite_disable_double_quoted_strings(try open())
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle) }
    }

    // MARK: - Statements

    /// Runs `sql`, one statement or several separated by semicolons, without arguments; rows are ignored.
    func execute(_ sql: String) throws(SQLiteError) {
        let connection = try open()
        var failure: SQLiteError?
        sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                var code = sqlite3_prepare_v2(connection, current, -1, &statement, &tail)
                if code == SQLITE_OK, let statement {
                    repeat { code = sqlite3_step(statement) } while code == SQLITE_ROW
                    if code != SQLITE_DONE {
                        failure = SQLiteError(
                            code: code, connection: connection,
                            sql: sqlite3_sql(statement).map { String(cString: $0) })
                    }
                    sqlite3_finalize(statement)
                } else if code != SQLITE_OK {
                    failure = SQLiteError(code: code, connection: connection, sql: String(cString: current))
                }
                if failure != nil { return }
                next = tail
            }
        }
        if let failure { throw failure }
    }

    /// Runs one statement with `arguments`; rows are ignored.
    func execute(_ sql: String, _ arguments: [any SQLiteValueConvertible]) throws(SQLiteError) {
        try prepare(sql).execute(arguments)
    }

    /// Compiles one statement, for the caller to keep or drop.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: try open(), sql: sql)
    }

    /// The compiled statement for `sql`, compiled on first use and kept until the connection closes: for the
    /// statements that run again and again, which then cost neither parsing nor planning.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = cache[sql] { return statement }
        let statement = try SQLiteStatement(connection: try open(), sql: sql, persistent: true)
        cache[sql] = statement
        return statement
    }

    /// Runs one statement with `arguments` and returns `transform` of each row.
    func rows<T>(
        _ sql: String, _ arguments: [any SQLiteValueConvertible] = [],
        _ transform: (SQLiteRow) throws -> T
    ) throws -> [T] {
        try prepare(sql).rows(arguments, transform)
    }

    /// Runs one statement with `arguments` and returns `transform` of its first row, or nil when it has none.
    func firstRow<T>(
        _ sql: String, _ arguments: [any SQLiteValueConvertible] = [],
        _ transform: (SQLiteRow) throws -> T
    ) throws -> T? {
        try prepare(sql).firstRow(arguments, transform)
    }

    /// The first column of each row, as text (for pragmas such as `integrity_check`).
    func texts(_ sql: String, _ arguments: [any SQLiteValueConvertible] = []) throws -> [String] {
        try rows(sql, arguments) { $0.text(at: 0) }
    }

    // MARK: - State

    /// The rowid of the last row inserted on this connection.
    var lastInsertedRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// How many rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// True inside a transaction (between `BEGIN` and its `COMMIT` or `ROLLBACK`).
    var isInTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }
}
