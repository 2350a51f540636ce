import CSQLite
import HeraldFiles

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The permission store (docs/permissions.md, "The store"): registered manifests, decisions, pending requests and
/// the audit log, in one SQLite file in WAL mode with full synchronous commits.
///
/// Every method that changes something runs in one transaction and returns only after it has committed, so a
/// change reported as done survives a crash or `kill -9` of the daemon. Opening never recreates or rewrites an
/// existing file that is not a healthy Herald store: it refuses with an error naming the problem.
package final class PermissionStore: Sendable {
    /// Limits that keep the store bounded whatever the clients do.
    package struct Options: Hashable, Sendable {
        /// The audit log keeps this many newest lines of decisions on requests.
        package var auditLogLimit: Int
        /// At most this many pending requests are kept. A new request of an app that has others evicts its own
        /// least recently seen; an app's first evicts the least recently seen of the app with the most.
        package var pendingRequestLimit: Int
        /// The audit log keeps this many newest operator actions, apart from the lines of requests: requests never
        /// push an operator action out.
        package var operatorLogLimit: Int
        /// Of one user's decisions with one reason, this many a window are written one by one; the rest are
        /// counted into one folded line (``AuditWriter``).
        package var auditLinesPerUser: Int
        /// The window of ``auditLinesPerUser``, in seconds.
        package var auditFoldWindow: TimeInterval
        /// At most this many pending requests are kept for one app; its least recently seen go first.
        package var pendingRequestsPerApp: Int

        package init(
            auditLogLimit: Int = 10_000, pendingRequestLimit: Int = 1_000, operatorLogLimit: Int = 10_000,
            auditLinesPerUser: Int = 100, auditFoldWindow: TimeInterval = 60, pendingRequestsPerApp: Int = 50
        ) {
            self.auditLogLimit = max(1, auditLogLimit)
            self.pendingRequestLimit = max(1, pendingRequestLimit)
            self.operatorLogLimit = max(1, operatorLogLimit)
            self.auditLinesPerUser = max(0, auditLinesPerUser)
            self.auditFoldWindow = max(1, auditFoldWindow)
            self.pendingRequestsPerApp = max(1, pendingRequestsPerApp)
        }
    }

    /// The store's file name inside the daemon's state directory.
    package static let defaultFileName = "permissions.sqlite"
    /// The 16 bytes every SQLite 3 database file starts with.
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// The database file.
    package let path: String
    package let options: Options
    /// The one connection, used by one caller at a time.
    private let connection: SharedConnection
    private let clock: @Sendable () -> Date

    /// Opens the store at `path`, creating it only when no file exists there. An existing file must be a
    /// healthy Herald store: anything else is refused and left as it was.
    package init(path: String, options: Options = Options(), clock: @escaping @Sendable () -> Date = { Date() })
        throws(PermissionStoreError)
    {
        self.path = path
        self.options = options
        self.clock = clock
        let exists = FileKind.exists(path)
        if exists {
            if FileKind.isDirectory(path) { throw .unreadable(path: path, reason: "it is a directory") }
            try Self.checkExisting(path)
        } else {
            let parent = PathName.directory(of: path)
            guard FileKind.isDirectory(parent) else { throw .directoryMissing(parent) }
        }
        do {
            let db = try SQLiteConnection(path: path, mode: .readWriteCreate)
            try Self.configure(db, readonly: false)
            try StoreSchema.migrate(db)
            try AuditWriter.prepare(db)
            connection = SharedConnection(db)
        } catch {
            if !exists {
                // Only a file this call created is removed.
                for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            }
            throw Self.mapOpenError(error, path: path)
        }
    }

    /// Opens (or creates) the store in a state directory, as ``defaultFileName``.
    package convenience init(stateDirectory: String, options: Options = Options()) throws(PermissionStoreError) {
        try self.init(path: PathName.joined(stateDirectory, Self.defaultFileName), options: options)
    }

    /// Closes the database; later calls fail. Closing is also done when the store is released.
    package func close() throws(PermissionStoreError) {
        do throws(SQLiteError) {
            try connection.use { db throws(SQLiteError) in try db.close() }
        } catch {
            throw .database(error.message)
        }
    }

    // MARK: - Manifests

    /// Registers `manifest`, or replaces the registered manifest with the same id. A changed manifest keeps the
    /// app's decision; the audit log records what changed. Refused when another app claims one of its selectors.
    @discardableResult
    package func register(_ manifest: Manifest, by actor: String) throws(PermissionStoreError) -> ManifestChange {
        try write { db in
            let stored = try Self.fetchManifests(db, path: self.path)
            let conflicts = ManifestRegistry(stored.map(\.manifest)).conflicts(with: manifest)
            if !conflicts.isEmpty {
                throw PermissionStoreError.selectorConflict(app: manifest.id.rawValue, conflicts: conflicts)
            }
            let now = self.now()
            let json = manifest.jsonText
            let decision = try Self.fetchDecision(db, manifest.id)?.decision ?? .notDetermined
            guard let old = stored.first(where: { $0.manifest.id == manifest.id }) else {
                try db.execute(
                    """
                    INSERT INTO manifest (app_id, manifest_json, added_at, updated_at) VALUES (?, ?, ?, ?)
                    """, [manifest.id.rawValue, json, now, now])
                try self.appendOperatorAction(
                    db,
                    AuditEvent(
                        app: manifest.id, operation: "app-add", decision: decision.rawValue, reason: "operator",
                        detail: "registered \(ManifestDocument.quoted(manifest.name)) by \(actor); types: "
                            + (manifest.bonjourServices.map(\.description).joined(separator: " ")).ifEmpty("none")))
                return ManifestChange.added
            }
            if old.manifest.jsonText == json { return ManifestChange.unchanged }
            let summary = manifest.changes(from: old.manifest).joined(separator: "; ")
            try db.execute(
                "UPDATE manifest SET app_id = ?, manifest_json = ?, updated_at = ? WHERE app_id = ?",
                [manifest.id.rawValue, json, now, manifest.id.rawValue])
            try self.appendOperatorAction(
                db,
                AuditEvent(
                    app: manifest.id, operation: "app-update", decision: decision.rawValue, reason: "operator",
                    detail: "manifest changed by \(actor), decision kept: \(summary)"))
            return ManifestChange.updated(summary: summary)
        }
    }

    /// Removes an app: its manifest, its decision and its pending requests. Returns the manifest removed.
    @discardableResult
    package func removeApp(_ id: AppID, by actor: String) throws(PermissionStoreError) -> Manifest {
        try write { db in
            guard let stored = try Self.fetchManifests(db, path: self.path, id: id).first else {
                throw PermissionStoreError.unknownApp(id.rawValue)
            }
            try db.execute("DELETE FROM manifest WHERE app_id = ?", [id.rawValue])
            try self.appendOperatorAction(
                db,
                AuditEvent(
                    app: id, operation: "app-remove", decision: AppDecision.notDetermined.rawValue, reason: "operator",
                    detail: "removed by \(actor), with its decision and pending requests"))
            return stored.manifest
        }
    }

    /// The registered manifest with `id`, or nil.
    package func manifest(_ id: AppID) throws(PermissionStoreError) -> StoredManifest? {
        try read { db in try Self.fetchManifests(db, path: self.path, id: id).first }
    }

    /// Every registered manifest, ordered by id.
    package func manifests() throws(PermissionStoreError) -> [StoredManifest] {
        try read { db in try Self.fetchManifests(db, path: self.path) }
    }

    // MARK: - Decisions

    /// Grants the app local network access; its pending requests are answered and removed.
    @discardableResult
    package func grant(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .granted, by: actor)
    }

    /// Denies the app local network access; its pending requests are answered and removed.
    @discardableResult
    package func deny(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .denied, by: actor)
    }

    /// Returns the app to not determined: its next requests are parked and recorded as pending again.
    @discardableResult
    package func reset(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .notDetermined, by: actor)
    }

    /// The decision about `id` (`.notDetermined` when none was made).
    package func decision(for id: AppID) throws(PermissionStoreError) -> AppDecision {
        try decisionRecord(for: id)?.decision ?? .notDetermined
    }

    /// The stored decision about `id` with who made it and when; nil when not determined.
    package func decisionRecord(for id: AppID) throws(PermissionStoreError) -> DecisionRecord? {
        try read { db in try Self.fetchDecision(db, id) }
    }

    /// The manifests and decisions at one moment, for ``PermissionPolicy``.
    package func snapshot() throws(PermissionStoreError) -> PermissionSnapshot {
        try read { db in
            let manifests = try Self.fetchManifests(db, path: self.path).map(\.manifest)
            var decisions: [AppID: AppDecision] = [:]
            let rows = try db.rows("SELECT app_id, decision FROM decision") { row in
                (row.text("app_id"), row.text("decision"))
            }
            for (app, stored) in rows {
                if let id = try? AppID(app), let decision = AppDecision(rawValue: stored) { decisions[id] = decision }
            }
            return PermissionSnapshot(manifests: manifests, decisions: decisions)
        }
    }

    private func decide(_ id: AppID, _ decision: AppDecision, by actor: String)
        throws(PermissionStoreError) -> DecisionChange
    {
        try write { db in
            guard try Self.fetchManifests(db, path: self.path, id: id).first != nil else {
                throw PermissionStoreError.unknownApp(id.rawValue)
            }
            let previous = try Self.fetchDecision(db, id)?.decision ?? .notDetermined
            let operation: String
            switch decision {
            case .notDetermined:
                operation = "reset"
                try db.execute("DELETE FROM decision WHERE app_id = ?", [id.rawValue])
            case .granted, .denied:
                operation = decision == .granted ? "grant" : "deny"
                try db.execute(
                    """
                    INSERT INTO decision (app_id, decision, decided_at, decided_by) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app_id) DO UPDATE SET
                        decision = excluded.decision, decided_at = excluded.decided_at, decided_by = excluded.decided_by
                    """, [id.rawValue, decision.rawValue, self.now(), actor])
                try db.execute("DELETE FROM pending_request WHERE app_id = ?", [id.rawValue])
            }
            try self.appendOperatorAction(
                db,
                AuditEvent(
                    app: id, operation: operation, decision: decision.rawValue, reason: "operator",
                    detail: "by \(actor); was \(previous.rawValue)"))
            return DecisionChange(app: id, previous: previous, current: decision)
        }
    }

    // MARK: - Requests and the audit log

    /// Records a pending request, or counts a repeat of one (same app, operation and subject; an app's address
    /// lookups are one request, see ``PendingRequest/folded``). Nothing is recorded, and nil returned, when the app
    /// has been decided meanwhile.
    @discardableResult
    package func recordPending(_ request: PendingRequest) throws(PermissionStoreError) -> StoredPendingRequest? {
        try write { db in try self.insertPending(db, request, now: self.now()) }
    }

    /// Records the audit line of a decision and, when there is one, its pending request, in one transaction.
    package func record(_ decision: PermissionDecision, caller: CallerIdentity) throws(PermissionStoreError) {
        try record([(decision, caller)])
    }

    /// Records many decisions (audit lines and pending requests) in one transaction; returns the pending requests
    /// they touched as stored after it, each once, in the order first touched (``StoredPendingRequest/isNew`` when
    /// one of them recorded it for the first time). Each user's decisions are folded past
    /// ``Options/auditLinesPerUser`` a window (``AuditWriter``).
    @discardableResult
    package func record(_ batch: [(decision: PermissionDecision, caller: CallerIdentity)])
        throws(PermissionStoreError) -> [StoredPendingRequest]
    {
        guard !batch.isEmpty else { return [] }
        return try write { db in
            let now = self.now()
            var audit = AuditWriter(options: self.options, now: now)
            var order: [PendingKey] = []
            var pending: [PendingKey: StoredPendingRequest] = [:]
            for entry in batch {
                try audit.appendRequest(db, entry.decision.auditEvent(caller: entry.caller), uid: entry.caller.uid)
                guard let request = entry.decision.pendingRequest,
                    var stored = try self.insertPending(db, request, now: now)
                else { continue }
                let key = PendingKey(stored.request)
                if let earlier = pending[key] {
                    stored.isNew = stored.isNew || earlier.isNew
                } else {
                    order.append(key)
                }
                pending[key] = stored
            }
            try audit.finish(db)
            return order.compactMap { pending[$0] }
        }
    }

    /// The pending requests, most recently seen first; only those of `app` when given.
    package func pendingRequests(for app: AppID? = nil) throws(PermissionStoreError) -> [StoredPendingRequest] {
        try read { db in
            let filter = app == nil ? "" : "WHERE app_id = ?"
            return try db.rows(
                """
                SELECT * FROM pending_request \(filter) ORDER BY last_seen DESC, id DESC
                """, app.map { [$0.rawValue] } ?? [], Self.pending
            ).compactMap { $0 }
        }
    }

    /// Appends lines of `kind` to the audit log as they are (not folded), dropping the oldest of that kind beyond
    /// its bound (``Options/auditLogLimit``, ``Options/operatorLogLimit``).
    package func appendAudit(_ events: [AuditEvent], kind: AuditLineKind = .request) throws(PermissionStoreError) {
        try write { db in
            let now = self.now()
            for event in events {
                _ = try AuditWriter.insert(db, event, kind: kind, uid: nil, count: 1, time: now, options: self.options)
            }
        }
    }

    /// Audit lines with a sequence number above `sequence`, oldest first, at most `limit` of them.
    package func auditLog(after sequence: Int64 = 0, limit: Int = .max) throws(PermissionStoreError) -> [AuditRecord] {
        try auditLog(after: sequence, limit: limit, while: { _ in true }).records
    }

    /// Audit lines with a sequence number above `sequence`, oldest first: at most `limit`, and only as long as
    /// `accept` takes them (it is asked about each line before the line is included; the first line is included
    /// whatever it says). `more` is true when `accept` stopped the page before the limit or the end: the next page
    /// starts after the last record. Lines are read one at a time, so a page costs only what it holds.
    package func auditLog(after sequence: Int64, limit: Int, while accept: (AuditRecord) -> Bool)
        throws(PermissionStoreError) -> (records: [AuditRecord], more: Bool)
    {
        try read { db in
            var records: [AuditRecord] = []
            var more = false
            try db.prepare("SELECT * FROM audit_log WHERE sequence > ? ORDER BY sequence LIMIT ?")
                .forEachRow([sequence, Int64(max(0, min(limit, Int(Int64.max))))]) { row in
                    let record = Self.audit(row)
                    if !accept(record) && !records.isEmpty {
                        more = true
                        return false
                    }
                    records.append(record)
                    return true
                }
            return (records, more)
        }
    }

    /// The sequence number just before the newest `count` audit lines (0 when there are no more than `count`):
    /// ``auditLog(after:limit:while:)`` after it reads them page by page.
    package func auditSequence(beforeNewest count: Int) throws(PermissionStoreError) -> Int64 {
        guard count > 0 else {
            return try read { db in try db.firstRow("SELECT max(sequence) FROM audit_log") { $0.int64(at: 0) } ?? 0 }
        }
        return try read { db in
            let first = try db.firstRow(
                "SELECT sequence FROM audit_log ORDER BY sequence DESC LIMIT 1 OFFSET ?",
                [count - 1]
            ) { $0.int64(at: 0) }
            return first.map { $0 - 1 } ?? 0
        }
    }

    /// The newest `count` audit lines, oldest first.
    package func recentAuditLog(_ count: Int) throws(PermissionStoreError) -> [AuditRecord] {
        try read { db in
            try db.rows("SELECT * FROM audit_log ORDER BY sequence DESC LIMIT ?", [count], Self.audit).reversed()
        }
    }

    // MARK: - Health

    /// The result of SQLite's `PRAGMA integrity_check`: `["ok"]` for a healthy file.
    package func integrityCheck() throws(PermissionStoreError) -> [String] {
        try read { db in try db.texts("PRAGMA integrity_check") }
    }

    /// The migrations applied to this store, in order.
    package func appliedMigrations() throws(PermissionStoreError) -> [String] {
        try read { db in try StoreSchema.completedMigrations(db) }
    }

    /// The SQLite journal mode in force (`wal`).
    package func journalMode() throws(PermissionStoreError) -> String {
        try read { db in try db.texts("PRAGMA journal_mode").first ?? "" }
    }

    /// The value of one of the connection's pragmas (`synchronous`, `busy_timeout`), as text.
    func setting(_ pragma: String) throws(PermissionStoreError) -> String {
        try read { db in try db.texts("PRAGMA \(pragma)").first ?? "" }
    }

    // MARK: - Opening

    /// The most each connection keeps in SQLite's page cache, in KiB.
    static let pageCacheKiB = 64

    /// How long a statement waits for a lock another connection holds, in milliseconds.
    static let busyTimeoutMilliseconds: Int32 = 1_000

    /// Sets up a new connection: lock waits, strict SQL, foreign keys, the page cache and, to write, WAL with full
    /// synchronous commits.
    private static func configure(_ db: SQLiteConnection, readonly: Bool) throws {
        // Only this daemon writes the store (the state directory's lock keeps others off), so a lock held for long is
        // someone's sqlite3 session: the daemon, single-threaded, waits a second for it at most.
        try db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        try db.refuseDoubleQuotedStrings()
        try db.execute("PRAGMA foreign_keys = ON")
        // The store is small and read mostly: SQLite's default 2 MiB page cache per connection would only let the
        // daemon's heap creep up as the audit log turns over. The file's pages stay in the kernel's page cache.
        try db.execute("PRAGMA cache_size = -\(pageCacheKiB)")
        // Reading the schema fails here, with SQLite's own reason, when the file is not a database or is encrypted.
        try db.execute("SELECT * FROM sqlite_master LIMIT 1")
        guard !readonly else { return }
        let mode = try db.texts("PRAGMA journal_mode = WAL").first
        guard mode == "wal" else {
            throw SQLiteError(
                code: SQLITE_ERROR, message: "could not switch to WAL journal mode (it is \(mode ?? "unknown"))")
        }
        // Commits reach the disk before a call returns: a grant reported as done survives power loss too. Set after
        // the journal mode, which does not change it.
        try db.execute("PRAGMA synchronous = FULL")
    }

    /// Refuses an existing file that is not a healthy Herald store, without writing to it.
    private static func checkExisting(_ path: String) throws(PermissionStoreError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, reason: "permission denied or not a regular file") }
        let read = FileContents.readAll(from: fd, limit: 100)
        Glibc.close(fd)
        let header: [UInt8]
        switch read {
        case .success(let bytes): header = bytes
        case .failure(let failure): throw .unreadable(path: path, reason: failure.description)
        }
        if header.isEmpty { throw .notAHeraldStore(path: path, reason: "the file is empty") }
        guard header.count == 100, Array(header.prefix(16)) == sqliteHeader else {
            throw .notAHeraldStore(path: path, reason: "not an SQLite database")
        }
        guard access(path, W_OK) == 0 else {
            throw .unreadable(path: path, reason: "the file is not writable")
        }
        do {
            let db = try SQLiteConnection(path: path, mode: .readOnly)
            defer { try? db.close() }
            try configure(db, readonly: true)
            try db.transaction(.deferred) {
                let id = try db.firstRow("PRAGMA application_id") { Int32(truncatingIfNeeded: $0.int64(at: 0)) } ?? 0
                guard id == StoreSchema.applicationID else {
                    throw PermissionStoreError.notAHeraldStore(
                        path: path,
                        reason: id == 0
                            ? "an SQLite database of another program"
                            : "an SQLite database of another program (application id \(id))")
                }
                let check = try db.texts("PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw PermissionStoreError.corrupt(path: path, reason: check.prefix(3).joined(separator: "; "))
                }
                let unknown = try StoreSchema.appliedIdentifiers(db).subtracting(StoreSchema.identifiers)
                if !unknown.isEmpty {
                    throw PermissionStoreError.newerSchema(path: path, unknownMigrations: unknown.sorted())
                }
            }
        } catch {
            throw mapOpenError(error, path: path)
        }
    }

    private static func mapOpenError(_ error: any Error, path: String) -> PermissionStoreError {
        if let error = error as? PermissionStoreError { return error }
        if let error = error as? SQLiteError {
            switch error.code {
            case SQLITE_CORRUPT: return .corrupt(path: path, reason: error.message)
            case SQLITE_NOTADB: return .notAHeraldStore(path: path, reason: error.message)
            case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH:
                return .unreadable(path: path, reason: error.message)
            default: return .database(error.message)
            }
        }
        return .database(String(describing: error))
    }

    // MARK: - Rows

    /// Runs `body` in a write transaction: everything it did is committed when it returns, nothing when it throws.
    private func write<T>(_ body: (SQLiteConnection) throws -> T) throws(PermissionStoreError) -> T {
        do {
            return try connection.use { db in try db.transaction(.immediate) { try body(db) } }
        } catch {
            throw Self.mapOpenError(error, path: path)
        }
    }

    /// Runs `body` in a read transaction, which sees one state of the store throughout.
    private func read<T>(_ body: (SQLiteConnection) throws -> T) throws(PermissionStoreError) -> T {
        do {
            return try connection.use { db in try db.transaction(.deferred) { try body(db) } }
        } catch {
            throw Self.mapOpenError(error, path: path)
        }
    }

    private func now() -> Double { clock().timeIntervalSince1970 }

    private func appendOperatorAction(_ db: SQLiteConnection, _ event: AuditEvent) throws {
        _ = try AuditWriter.insert(db, event, kind: .operatorAction, uid: nil, count: 1, time: now(), options: options)
    }

    /// A pending request's identity in the store.
    private struct PendingKey: Hashable {
        var app: String
        var operation: String
        var subject: String

        init(_ request: PendingRequest) {
            app = request.appID.rawValue.lowercased()
            operation = request.operation.rawValue
            subject = request.subject
        }
    }

    /// Records `request` (folded) or counts a repeat, then keeps the bounds: the app's own least recently seen
    /// requests beyond ``Options/pendingRequestsPerApp``; beyond ``Options/pendingRequestLimit`` in all, the app's
    /// own least recently seen when it has others, else (its first request) the least recently seen of the app
    /// with the most. So one app's requests never evict another's unless that other holds more.
    private func insertPending(_ db: SQLiteConnection, _ request: PendingRequest, now: Double) throws
        -> StoredPendingRequest?
    {
        if try Self.fetchDecision(db, request.appID) != nil { return nil }
        let request = request.folded
        let app = request.appID.rawValue
        let stored = try db.cachedStatement(
            """
            INSERT INTO pending_request (app_id, app_name, usage_description, operation, service_type, subject,
                                         latest_subject, first_seen, last_seen, count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (app_id, operation, subject) DO UPDATE SET
                app_name = excluded.app_name, usage_description = excluded.usage_description,
                service_type = excluded.service_type, latest_subject = excluded.latest_subject,
                last_seen = excluded.last_seen, count = count + 1
            RETURNING *
            """
        ).firstRow(
            [
                app, request.appName, request.usageDescription, request.operation.rawValue,
                request.serviceType, request.subject, request.latestSubject, now, now,
            ], Self.pending)
        try db.cachedStatement(
            """
            DELETE FROM pending_request WHERE id IN (
                SELECT id FROM pending_request WHERE app_id = ? ORDER BY last_seen DESC, id DESC LIMIT -1 OFFSET ?)
            """
        ).execute([app, options.pendingRequestsPerApp])
        var total = try db.cachedStatement("SELECT count(*) FROM pending_request").firstRow { $0.int(at: 0) } ?? 0
        while total > options.pendingRequestLimit {
            let own =
                try db.cachedStatement("SELECT count(*) FROM pending_request WHERE app_id = ?")
                .firstRow([app]) { $0.int(at: 0) } ?? 0
            if own > 1 {
                try db.cachedStatement(
                    """
                    DELETE FROM pending_request WHERE id = (
                        SELECT id FROM pending_request WHERE app_id = ? ORDER BY last_seen, id LIMIT 1)
                    """
                ).execute([app])
            } else {
                try db.cachedStatement(
                    """
                    DELETE FROM pending_request WHERE id = (
                        SELECT p.id FROM pending_request AS p
                        JOIN (SELECT app_id, count(*) AS held FROM pending_request GROUP BY app_id) AS a USING (app_id)
                        WHERE p.app_id <> ? ORDER BY a.held DESC, p.last_seen, p.id LIMIT 1)
                    """
                ).execute([app])
            }
            guard db.changes > 0 else { break }
            total -= db.changes
        }
        guard var stored = stored.flatMap({ $0 }) else { return nil }
        stored.isNew = stored.count == 1
        return stored
    }

    private static func fetchManifests(_ db: SQLiteConnection, path: String, id: AppID? = nil) throws
        -> [StoredManifest]
    {
        try db.rows(
            "SELECT * FROM manifest \(id == nil ? "" : "WHERE app_id = ?") ORDER BY app_id",
            id.map { [$0.rawValue] } ?? []
        ) { row in
            let json = row.text("manifest_json")
            let manifest: Manifest
            do throws(ManifestError) {
                manifest = try ManifestParser.parse(Array(json.utf8), format: .json).manifest
            } catch {
                throw PermissionStoreError.corrupt(
                    path: path,
                    reason: "the stored manifest of \(row.text("app_id")) does not validate: "
                        + error.problems.map(\.description).joined(separator: "; "))
            }
            return StoredManifest(
                manifest: manifest, addedAt: Date(timeIntervalSince1970: row.double("added_at")),
                updatedAt: Date(timeIntervalSince1970: row.double("updated_at")))
        }
    }

    private static func fetchDecision(_ db: SQLiteConnection, _ id: AppID) throws -> DecisionRecord? {
        let record = try db.firstRow("SELECT * FROM decision WHERE app_id = ?", [id.rawValue]) {
            row -> DecisionRecord? in
            guard let stored = try? AppID(row.text("app_id")),
                let decision = AppDecision(rawValue: row.text("decision"))
            else { return nil }
            return DecisionRecord(
                app: stored, decision: decision,
                time: Date(timeIntervalSince1970: row.double("decided_at")),
                decidedBy: row.text("decided_by"))
        }
        return record ?? nil
    }

    private static func pending(_ row: SQLiteRow) -> StoredPendingRequest? {
        guard let id = try? AppID(row.text("app_id")),
            let operation = PermissionOperation(rawValue: row.text("operation"))
        else { return nil }
        let request = PendingRequest(
            appID: id, appName: row.text("app_name"),
            usageDescription: row.text("usage_description"), operation: operation,
            serviceType: row.optionalText("service_type"), subject: row.text("subject"),
            latestSubject: row.optionalText("latest_subject"))
        return StoredPendingRequest(
            request: request, firstSeen: Date(timeIntervalSince1970: row.double("first_seen")),
            lastSeen: Date(timeIntervalSince1970: row.double("last_seen")),
            count: row.int("count"))
    }

    private static func audit(_ row: SQLiteRow) -> AuditRecord {
        let app = row.optionalText("app_id")
        let event = AuditEvent(
            app: app.flatMap { try? AppID($0) }, operation: row.text("operation"),
            serviceType: row.optionalText("service_type"), decision: row.text("decision"),
            reason: row.text("reason"), detail: row.text("detail"))
        return AuditRecord(
            sequence: row.int64("sequence"), time: Date(timeIntervalSince1970: row.double("time")),
            app: app, event: event, kind: AuditLineKind(rawValue: row.int("class")) ?? .request,
            uid: row.optionalInt64("uid").flatMap { UInt32(exactly: $0) }, count: row.int("count"))
    }
}

extension String {
    /// `replacement` when the string is empty.
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
