/// Writes the audit lines of one transaction of the store, under the log's two rules:
///
/// - **Retention by kind.** Operator actions and decisions on requests are counted and trimmed apart, each kind
///   to its own bound (``PermissionStore/Options/operatorLogLimit``, ``PermissionStore/Options/auditLogLimit``), so
///   that no amount of request traffic pushes an operator action out of the log. The counts live in the
///   `audit_retention` table, so a trim deletes only the excess, oldest first, without counting the log.
/// - **Folding per user.** Of the decisions on one user's requests with one reason, the first
///   ``PermissionStore/Options/auditLinesPerUser`` of a window (``PermissionStore/Options/auditFoldWindow``) are
///   written one by one; the rest are counted into one `folded` line for that user and reason, which is written
///   again at the end of every transaction that adds to it (with a new sequence number, so that `herald log
///   --follow` sees the new count) and names the latest of them. A user asking for thousands of distinct things
///   thus costs the log about `auditLinesPerUser` + 1 lines a minute per reason, not thousands.
struct AuditWriter {
    private struct FoldKey: Hashable {
        var uid: Int64
        var reason: String
    }

    private struct Fold {
        var windowStart: Double
        var lines: Int
        var folded: Int
        var lineSequence: Int64?
        /// The latest decision folded in this transaction, when there is one: the folded line is rewritten.
        var latest: AuditEvent?
    }

    let options: PermissionStore.Options
    /// The transaction's time, which all its lines carry.
    let now: Double
    private var folds: [FoldKey: Fold] = [:]

    init(options: PermissionStore.Options, now: Double) {
        self.options = options
        self.now = now
    }

    /// Appends an operator action.
    mutating func appendOperatorAction(_ db: SQLiteConnection, _ event: AuditEvent) throws {
        _ = try Self.insert(db, event, kind: .operatorAction, uid: nil, count: 1, time: now, options: options)
    }

    /// Appends the decision on a request of the user `uid`, or counts it into that user's folded line; with no uid,
    /// the line is written as it is.
    mutating func appendRequest(_ db: SQLiteConnection, _ event: AuditEvent, uid: UInt32?) throws {
        guard let uid else {
            _ = try Self.insert(db, event, kind: .request, uid: nil, count: 1, time: now, options: options)
            return
        }
        let key = FoldKey(uid: Int64(uid), reason: event.reason)
        var fold = try folds[key] ?? load(db, key)
        if fold.lines < options.auditLinesPerUser {
            _ = try Self.insert(db, event, kind: .request, uid: uid, count: 1, time: now, options: options)
            fold.lines += 1
        } else {
            fold.folded += 1
            fold.latest = event
        }
        folds[key] = fold
    }

    /// Writes the folded lines that grew and the state of every window touched. Called once, before the
    /// transaction commits.
    mutating func finish(_ db: SQLiteConnection) throws {
        guard !folds.isEmpty else { return }
        for (key, var fold) in folds {
            if let latest = fold.latest {
                if let sequence = fold.lineSequence { try Self.delete(db, sequence: sequence, kind: .request) }
                let line = AuditEvent(
                    app: latest.app, operation: "folded", serviceType: nil, decision: latest.decision,
                    reason: key.reason,
                    detail: "uid \(key.uid): \(fold.folded) more decision\(fold.folded == 1 ? "" : "s") with this "
                        + "reason within \(Int(options.auditFoldWindow)) s, after the \(options.auditLinesPerUser) "
                        + "written one by one; the latest: \(latest.detail)")
                fold.lineSequence = try Self.insert(
                    db, line, kind: .request, uid: UInt32(key.uid), count: fold.folded,
                    time: now, options: options)
            }
            try db.cachedStatement(
                """
                INSERT INTO audit_fold (uid, reason, window_start, lines, folded, line_sequence) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (uid, reason) DO UPDATE SET
                    window_start = excluded.window_start, lines = excluded.lines, folded = excluded.folded,
                    line_sequence = excluded.line_sequence
                """
            ).execute([key.uid, key.reason, fold.windowStart, fold.lines, fold.folded, fold.lineSequence])
        }
        // Windows that ended are forgotten: the table holds only the users active within the last window.
        try db.cachedStatement("DELETE FROM audit_fold WHERE window_start <= ?")
            .execute([now - options.auditFoldWindow])
        folds.removeAll()
    }

    /// The user's window for the reason as stored, or a new one when none is open.
    private func load(_ db: SQLiteConnection, _ key: FoldKey) throws -> Fold {
        let stored = try db.cachedStatement(
            """
            SELECT window_start, lines, folded, line_sequence FROM audit_fold WHERE uid = ? AND reason = ?
            """
        ).firstRow([key.uid, key.reason]) { row in
            Fold(
                windowStart: row.double("window_start"), lines: row.int("lines"), folded: row.int("folded"),
                lineSequence: row.optionalInt64("line_sequence"))
        }
        if let stored, now - stored.windowStart < options.auditFoldWindow { return stored }
        return Fold(windowStart: now, lines: 0, folded: 0, lineSequence: nil)
    }

    // MARK: - Lines and their retention

    static let insertLine = """
        INSERT INTO audit_log (time, app_id, operation, service_type, decision, reason, detail, class, uid, count)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let countLine = "UPDATE audit_retention SET lines = lines + ? WHERE class = ? RETURNING lines"
    static let trimOldest = """
        DELETE FROM audit_log WHERE sequence IN (
            SELECT sequence FROM audit_log WHERE class = ? ORDER BY sequence LIMIT ?)
        """

    /// The longest detail kept, in bytes of UTF-8: a line of the log always fits in a control reply.
    static let maxDetailBytes = 16 * 1024

    /// Inserts a line, then trims its kind to its bound; returns the line's sequence number.
    static func insert(
        _ db: SQLiteConnection, _ event: AuditEvent, kind: AuditLineKind, uid: UInt32?, count: Int,
        time: Double, options: PermissionStore.Options
    ) throws -> Int64 {
        try db.cachedStatement(insertLine).execute([
            time, event.app?.rawValue, event.operation, event.serviceType, event.decision, event.reason,
            truncated(event.detail), kind.rawValue, uid.map { Int64($0) }, count,
        ])
        let sequence = db.lastInsertedRowID
        let lines = try db.cachedStatement(countLine).firstRow([1, kind.rawValue]) { $0.int(at: 0) } ?? 0
        let limit = kind == .operatorAction ? options.operatorLogLimit : options.auditLogLimit
        if lines > limit {
            try db.cachedStatement(trimOldest).execute([kind.rawValue, lines - limit])
            try db.cachedStatement(countLine).execute([-db.changes, kind.rawValue])
        }
        return sequence
    }

    /// Deletes one line of `kind`, if it is still there.
    static func delete(_ db: SQLiteConnection, sequence: Int64, kind: AuditLineKind) throws {
        try db.cachedStatement("DELETE FROM audit_log WHERE sequence = ? AND class = ?").execute([
            sequence, kind.rawValue,
        ])
        if db.changes > 0 { try db.cachedStatement(countLine).execute([-db.changes, kind.rawValue]) }
    }

    /// `detail` cut to ``maxDetailBytes`` (at a character boundary), marked with `…` when cut.
    static func truncated(_ detail: String) -> String {
        guard detail.utf8.count > maxDetailBytes else { return detail }
        var end = detail.utf8.index(detail.utf8.startIndex, offsetBy: maxDetailBytes - 3)
        while end > detail.startIndex, end.samePosition(in: detail.unicodeScalars) == nil {
            end = detail.utf8.index(before: end)
        }
        return String(detail.unicodeScalars[..<end]) + "…"
    }

    /// Prepares the statements that recording runs into the connection's statement cache. The daemon records
    /// decisions in batches while it serves; compiling these statements for every line would run SQLite's parser
    /// and query planner again and again, and map their code back into memory in the middle of serving.
    static func prepare(_ db: SQLiteConnection) throws {
        for sql in [insertLine, countLine, trimOldest] { _ = try db.cachedStatement(sql) }
    }
}
