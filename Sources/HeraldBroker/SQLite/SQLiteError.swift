import CSQLite

/// A failure reported by SQLite: its result code and its message, and the statement that failed when there was one.
struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CORRUPT_INDEX`, `SQLITE_CONSTRAINT_FOREIGNKEY`, …): connections report them.
    let extendedCode: Int32
    /// SQLite's message (`database disk image is malformed`).
    let message: String
    /// The SQL that failed, when a statement did.
    let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.extendedCode = code
        self.message = message
        self.sql = sql
    }

    /// The error of a call on `connection` that returned `code`, with the connection's message for it.
    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(code: code, message: message ?? String(cString: sqlite3_errstr(code)), sql: sql)
    }

    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_BUSY`, …), which groups the extended ones.
    var code: Int32 { extendedCode & 0xff }

    var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " (while executing: \($0))" } ?? "")
    }
}
