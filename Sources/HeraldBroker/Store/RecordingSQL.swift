import GRDB

/// The statements that recording a decision runs: its audit line, and the trim that keeps the log bounded.
///
/// The daemon records decisions in batches while it serves (``PermissionStore/record(_:)``). Compiling these
/// statements for every line would run SQLite's parser and query planner again and again, and map their code back
/// into memory in the middle of serving. So the store prepares them into its connection's statement cache when it
/// opens, and recording only binds and steps them.
enum RecordingSQL {
    static let insertAudit = """
        INSERT INTO audit_log (time, app_id, operation, service_type, decision, reason, detail)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """
    /// Deletes the lines older than the newest ``PermissionStore/Options/auditLogLimit``.
    static let trimAudit = "DELETE FROM audit_log WHERE sequence <= ?"

    /// Prepares the statements into the connection's statement cache.
    static func prepare(_ db: Database) throws {
        for sql in [insertAudit, trimAudit] { _ = try db.cachedStatement(sql: sql) }
    }
}
