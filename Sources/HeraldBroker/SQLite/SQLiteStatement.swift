import CSQLite

/// A compiled SQL statement of one ``SQLiteConnection``: bind its parameters, step through its rows, read their
/// columns as ``SQLiteRow``s. It is reset before each use, so one statement runs again and again (the
/// connection's cache keeps the statements run often). Owned by the thread that owns its connection.
final class SQLiteStatement {
    /// The statement's SQL, for error messages.
    let sql: String
    private let handle: OpaquePointer
    /// Column positions by name, computed when a row is first read by name.
    private var columnIndexes: [String: Int32]?

    /// Compiles `sql`, which must hold exactly one statement. `persistent` tells SQLite that the statement is kept
    /// for many uses.
    init(connection: OpaquePointer, sql: String, persistent: Bool = false) throws(SQLiteError) {
        var statement: OpaquePointer?
        var trailing = ""
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        let code = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, flags, &statement, &tail)
            if let tail { trailing = String(cString: tail) }
            return code
        }
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            // SQLITE_OK without a statement: the SQL held only white space or comments.
            if code == SQLITE_OK { throw SQLiteError(code: SQLITE_MISUSE, message: "no statement", sql: sql) }
            throw SQLiteError(code: code, connection: connection, sql: sql)
        }
        // A second statement would be silently ignored: only white space may follow the first.
        guard trailing.allSatisfy(\.isWhitespace) else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: SQLITE_MISUSE, message: "more than one statement", sql: sql)
        }
        self.sql = sql
        self.handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `arguments` to its parameters, in order; their count must be the
    /// statement's.
    func bind(_ arguments: [any SQLiteValueConvertible]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE,
                message: "\(arguments.count) arguments for \(expected) parameters", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.sqliteValue {
            case .null:
                code = sqlite3_bind_null(handle, index)
            case .integer(let value):
                code = sqlite3_bind_int64(handle, index, value)
            case .real(let value):
                code = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                var value = value
                code = value.withUTF8 { bytes in
                    // An empty buffer may have no address, and a null pointer would bind NULL, not ''.
                    guard let base = bytes.baseAddress else {
                        return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text(handle, index, $0, Int32(bytes.count), csqlite_transient())
                    }
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(
                        handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count),
                        csqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// Runs the statement to its next row: true when there is one to read, false when it is done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw error(code)
        }
    }

    /// Rewinds the statement, keeping its bindings; it then holds no lock and no row.
    func reset() {
        sqlite3_reset(handle)
    }

    /// Runs the statement with `arguments` to its end, ignoring any rows.
    func execute(_ arguments: [any SQLiteValueConvertible] = []) throws(SQLiteError) {
        try bind(arguments)
        defer { reset() }
        while try step() {}
    }

    /// Runs the statement with `arguments` and returns `transform` of each row. Every row is read, so that a
    /// statement with `RETURNING` runs to its end.
    func rows<T>(_ arguments: [any SQLiteValueConvertible] = [], _ transform: (SQLiteRow) throws -> T) throws -> [T] {
        var values: [T] = []
        try forEachRow(arguments) { row in
            values.append(try transform(row))
            return true
        }
        return values
    }

    /// Runs the statement with `arguments` and returns `transform` of its first row, or nil when it has none.
    /// The statement is run to its end.
    func firstRow<T>(_ arguments: [any SQLiteValueConvertible] = [], _ transform: (SQLiteRow) throws -> T) throws -> T?
    {
        var value: T?
        try forEachRow(arguments) { row in
            if value == nil { value = try transform(row) }
            return true
        }
        return value
    }

    /// Runs the statement with `arguments`, handing each row to `body` until it returns false; then resets it.
    func forEachRow(_ arguments: [any SQLiteValueConvertible], _ body: (SQLiteRow) throws -> Bool) throws {
        try bind(arguments)
        defer { reset() }
        while try step() {
            guard try body(SQLiteRow(statement: self)) else { return }
        }
    }

    // MARK: - Columns of the current row

    /// How many columns each row has.
    var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The position of the column called `name` (as the statement names it: `SELECT count(*) AS held`).
    func columnIndex(_ name: String) -> Int32? {
        if columnIndexes == nil {
            var indexes: [String: Int32] = [:]
            for index in 0..<columnCount {
                // The first of two columns with one name wins, as in SQLite's own lookups.
                if let text = sqlite3_column_name(handle, index), indexes[String(cString: text)] == nil {
                    indexes[String(cString: text)] = index
                }
            }
            columnIndexes = indexes
        }
        return columnIndexes?[name]
    }

    func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    func text(at index: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))),
            as: UTF8.self)
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, connection: sqlite3_db_handle(handle), sql: sql)
    }
}
