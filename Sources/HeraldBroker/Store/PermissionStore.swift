import Foundation
import GRDB

/// The permission store (docs/permissions.md, "The store"): registered manifests, decisions, pending requests and
/// the audit log, in one SQLite file in WAL mode with full synchronous commits.
///
/// Every method that changes something runs in one transaction and returns only after it has committed, so a
/// change reported as done survives a crash or `kill -9` of the daemon. Opening never recreates or rewrites an
/// existing file that is not a healthy Herald store: it refuses with an error naming the problem.
public final class PermissionStore: Sendable {
    /// Limits that keep the store bounded whatever the clients do.
    public struct Options: Hashable, Sendable {
        /// The audit log keeps this many newest lines of decisions on requests.
        public var auditLogLimit: Int
        /// At most this many pending requests are kept. A new request of an app that has others evicts its own
        /// least recently seen; an app's first evicts the least recently seen of the app with the most.
        public var pendingRequestLimit: Int
        /// The audit log keeps this many newest operator actions, apart from the lines of requests: requests never
        /// push an operator action out.
        public var operatorLogLimit: Int
        /// Of one user's decisions with one reason, this many a window are written one by one; the rest are
        /// counted into one folded line (``AuditWriter``).
        public var auditLinesPerUser: Int
        /// The window of ``auditLinesPerUser``, in seconds.
        public var auditFoldWindow: TimeInterval
        /// At most this many pending requests are kept for one app; its least recently seen go first.
        public var pendingRequestsPerApp: Int

        public init(auditLogLimit: Int = 10_000, pendingRequestLimit: Int = 1_000, operatorLogLimit: Int = 10_000,
                    auditLinesPerUser: Int = 100, auditFoldWindow: TimeInterval = 60, pendingRequestsPerApp: Int = 50) {
            self.auditLogLimit = max(1, auditLogLimit)
            self.pendingRequestLimit = max(1, pendingRequestLimit)
            self.operatorLogLimit = max(1, operatorLogLimit)
            self.auditLinesPerUser = max(0, auditLinesPerUser)
            self.auditFoldWindow = max(1, auditFoldWindow)
            self.pendingRequestsPerApp = max(1, pendingRequestsPerApp)
        }
    }

    /// The store's file name inside the daemon's state directory.
    public static let defaultFileName = "permissions.sqlite"
    /// The 16 bytes every SQLite 3 database file starts with.
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// The database file.
    public let path: String
    public let options: Options
    private let pool: DatabasePool
    private let clock: @Sendable () -> Date

    /// Opens the store at `path`, creating it only when no file exists there. An existing file must be a
    /// healthy Herald store: anything else is refused and left as it was.
    public init(path: String, options: Options = Options(), clock: @escaping @Sendable () -> Date = { Date() })
    throws(PermissionStoreError) {
        self.path = path
        self.options = options
        self.clock = clock
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists {
            if isDirectory.boolValue { throw .unreadable(path: path, reason: "it is a directory") }
            try Self.checkExisting(path)
        } else {
            let directory = (path as NSString).deletingLastPathComponent
            var parentIsDirectory: ObjCBool = false
            let parent = directory.isEmpty ? "." : directory
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &parentIsDirectory),
                  parentIsDirectory.boolValue
            else { throw .directoryMissing(parent) }
        }
        do {
            pool = try DatabasePool(path: path, configuration: Self.configuration(readonly: false))
            try StoreSchema.migrator.migrate(pool)
            try pool.writeWithoutTransaction(AuditWriter.prepare)
        } catch {
            if !exists {
                // Only a file this call created is removed.
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            throw Self.mapOpenError(error, path: path)
        }
    }

    /// Opens (or creates) the store in a state directory, as ``defaultFileName``.
    public convenience init(stateDirectory: String, options: Options = Options()) throws(PermissionStoreError) {
        try self.init(path: (stateDirectory as NSString).appendingPathComponent(Self.defaultFileName),
                      options: options)
    }

    /// Closes the database; later calls fail. Closing is also done when the store is released.
    public func close() throws(PermissionStoreError) {
        do { try pool.close() } catch { throw .database(String(describing: error)) }
    }

    // MARK: - Manifests

    /// Registers `manifest`, or replaces the registered manifest with the same id. A changed manifest keeps the
    /// app's decision; the audit log records what changed. Refused when another app claims one of its selectors.
    @discardableResult
    public func register(_ manifest: Manifest, by actor: String) throws(PermissionStoreError) -> ManifestChange {
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
                try db.execute(sql: """
                    INSERT INTO manifest (app_id, manifest_json, added_at, updated_at) VALUES (?, ?, ?, ?)
                    """, arguments: [manifest.id.rawValue, json, now, now])
                try self.appendOperatorAction(db, AuditEvent(
                    app: manifest.id, operation: "app-add", decision: decision.rawValue, reason: "operator",
                    detail: "registered \(ManifestDocument.quoted(manifest.name)) by \(actor); types: "
                        + (manifest.bonjourServices.map(\.description).joined(separator: " ")).ifEmpty("none")))
                return ManifestChange.added
            }
            if old.manifest.jsonText == json { return ManifestChange.unchanged }
            let summary = manifest.changes(from: old.manifest).joined(separator: "; ")
            try db.execute(sql: "UPDATE manifest SET app_id = ?, manifest_json = ?, updated_at = ? WHERE app_id = ?",
                           arguments: [manifest.id.rawValue, json, now, manifest.id.rawValue])
            try self.appendOperatorAction(db, AuditEvent(
                app: manifest.id, operation: "app-update", decision: decision.rawValue, reason: "operator",
                detail: "manifest changed by \(actor), decision kept: \(summary)"))
            return ManifestChange.updated(summary: summary)
        }
    }

    /// Removes an app: its manifest, its decision and its pending requests. Returns the manifest removed.
    @discardableResult
    public func removeApp(_ id: AppID, by actor: String) throws(PermissionStoreError) -> Manifest {
        try write { db in
            guard let stored = try Self.fetchManifests(db, path: self.path, id: id).first else {
                throw PermissionStoreError.unknownApp(id.rawValue)
            }
            try db.execute(sql: "DELETE FROM manifest WHERE app_id = ?", arguments: [id.rawValue])
            try self.appendOperatorAction(db, AuditEvent(
                app: id, operation: "app-remove", decision: AppDecision.notDetermined.rawValue, reason: "operator",
                detail: "removed by \(actor), with its decision and pending requests"))
            return stored.manifest
        }
    }

    /// The registered manifest with `id`, or nil.
    public func manifest(_ id: AppID) throws(PermissionStoreError) -> StoredManifest? {
        try read { db in try Self.fetchManifests(db, path: self.path, id: id).first }
    }

    /// Every registered manifest, ordered by id.
    public func manifests() throws(PermissionStoreError) -> [StoredManifest] {
        try read { db in try Self.fetchManifests(db, path: self.path) }
    }

    // MARK: - Decisions

    /// Grants the app local network access; its pending requests are answered and removed.
    @discardableResult
    public func grant(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .granted, by: actor)
    }

    /// Denies the app local network access; its pending requests are answered and removed.
    @discardableResult
    public func deny(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .denied, by: actor)
    }

    /// Returns the app to not determined: its next requests are parked and recorded as pending again.
    @discardableResult
    public func reset(_ id: AppID, by actor: String) throws(PermissionStoreError) -> DecisionChange {
        try decide(id, .notDetermined, by: actor)
    }

    /// The decision about `id` (`.notDetermined` when none was made).
    public func decision(for id: AppID) throws(PermissionStoreError) -> AppDecision {
        try decisionRecord(for: id)?.decision ?? .notDetermined
    }

    /// The stored decision about `id` with who made it and when; nil when not determined.
    public func decisionRecord(for id: AppID) throws(PermissionStoreError) -> DecisionRecord? {
        try read { db in try Self.fetchDecision(db, id) }
    }

    /// The manifests and decisions at one moment, for ``PermissionPolicy``.
    public func snapshot() throws(PermissionStoreError) -> PermissionSnapshot {
        try read { db in
            let manifests = try Self.fetchManifests(db, path: self.path).map(\.manifest)
            var decisions: [AppID: AppDecision] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT app_id, decision FROM decision") {
                if let id = try? AppID(row["app_id"] as String),
                   let decision = AppDecision(rawValue: row["decision"]) {
                    decisions[id] = decision
                }
            }
            return PermissionSnapshot(manifests: manifests, decisions: decisions)
        }
    }

    private func decide(_ id: AppID, _ decision: AppDecision, by actor: String)
    throws(PermissionStoreError) -> DecisionChange {
        try write { db in
            guard try Self.fetchManifests(db, path: self.path, id: id).first != nil else {
                throw PermissionStoreError.unknownApp(id.rawValue)
            }
            let previous = try Self.fetchDecision(db, id)?.decision ?? .notDetermined
            let operation: String
            switch decision {
            case .notDetermined:
                operation = "reset"
                try db.execute(sql: "DELETE FROM decision WHERE app_id = ?", arguments: [id.rawValue])
            case .granted, .denied:
                operation = decision == .granted ? "grant" : "deny"
                try db.execute(sql: """
                    INSERT INTO decision (app_id, decision, decided_at, decided_by) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app_id) DO UPDATE SET
                        decision = excluded.decision, decided_at = excluded.decided_at, decided_by = excluded.decided_by
                    """, arguments: [id.rawValue, decision.rawValue, self.now(), actor])
                try db.execute(sql: "DELETE FROM pending_request WHERE app_id = ?", arguments: [id.rawValue])
            }
            try self.appendOperatorAction(db, AuditEvent(
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
    public func recordPending(_ request: PendingRequest) throws(PermissionStoreError) -> StoredPendingRequest? {
        try write { db in try self.insertPending(db, request, now: self.now()) }
    }

    /// Records the audit line of a decision and, when there is one, its pending request, in one transaction.
    public func record(_ decision: PermissionDecision, caller: CallerIdentity) throws(PermissionStoreError) {
        try record([(decision, caller)])
    }

    /// Records many decisions (audit lines and pending requests) in one transaction; returns the pending requests
    /// they touched as stored after it, each once, in the order first touched (``StoredPendingRequest/isNew`` when
    /// one of them recorded it for the first time). Each user's decisions are folded past
    /// ``Options/auditLinesPerUser`` a window (``AuditWriter``).
    @discardableResult
    public func record(_ batch: [(decision: PermissionDecision, caller: CallerIdentity)])
    throws(PermissionStoreError) -> [StoredPendingRequest] {
        guard !batch.isEmpty else { return [] }
        return try write { db in
            let now = self.now()
            var audit = AuditWriter(options: self.options, now: now)
            var order: [PendingKey] = []
            var pending: [PendingKey: StoredPendingRequest] = [:]
            for entry in batch {
                try audit.appendRequest(db, entry.decision.auditEvent(caller: entry.caller), uid: entry.caller.uid)
                guard let request = entry.decision.pendingRequest,
                      var stored = try self.insertPending(db, request, now: now) else { continue }
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
    public func pendingRequests(for app: AppID? = nil) throws(PermissionStoreError) -> [StoredPendingRequest] {
        try read { db in
            let filter = app == nil ? "" : "WHERE app_id = ?"
            let rows = try Row.fetchAll(db, sql: """
                SELECT * FROM pending_request \(filter) ORDER BY last_seen DESC, id DESC
                """, arguments: StatementArguments(app.map { [$0.rawValue] } ?? []))
            return rows.compactMap(Self.pending)
        }
    }

    /// Appends lines of `kind` to the audit log as they are (not folded), dropping the oldest of that kind beyond
    /// its bound (``Options/auditLogLimit``, ``Options/operatorLogLimit``).
    public func appendAudit(_ events: [AuditEvent], kind: AuditLineKind = .request) throws(PermissionStoreError) {
        try write { db in
            let now = self.now()
            for event in events {
                _ = try AuditWriter.insert(db, event, kind: kind, uid: nil, count: 1, time: now, options: self.options)
            }
        }
    }

    /// Audit lines with a sequence number above `sequence`, oldest first, at most `limit` of them.
    public func auditLog(after sequence: Int64 = 0, limit: Int = .max) throws(PermissionStoreError) -> [AuditRecord] {
        try auditLog(after: sequence, limit: limit, while: { _ in true }).records
    }

    /// Audit lines with a sequence number above `sequence`, oldest first: at most `limit`, and only as long as
    /// `accept` takes them (it is asked about each line before the line is included; the first line is included
    /// whatever it says). `more` is true when `accept` stopped the page before the limit or the end: the next page
    /// starts after the last record. Lines are read one at a time, so a page costs only what it holds.
    public func auditLog(after sequence: Int64, limit: Int, while accept: (AuditRecord) -> Bool)
    throws(PermissionStoreError) -> (records: [AuditRecord], more: Bool) {
        try read { db in
            var records: [AuditRecord] = []
            let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM audit_log WHERE sequence > ? ORDER BY sequence LIMIT ?",
                                             arguments: [sequence, Int64(max(0, min(limit, Int(Int64.max))))])
            while let row = try cursor.next() {
                let record = Self.audit(row)
                if !accept(record) && !records.isEmpty { return (records, true) }
                records.append(record)
            }
            return (records, false)
        }
    }

    /// The sequence number just before the newest `count` audit lines (0 when there are no more than `count`):
    /// ``auditLog(after:limit:while:)`` after it reads them page by page.
    public func auditSequence(beforeNewest count: Int) throws(PermissionStoreError) -> Int64 {
        guard count > 0 else { return try read { db in try Int64.fetchOne(db, sql: "SELECT max(sequence) FROM audit_log") ?? 0 } }
        return try read { db in
            let first = try Int64.fetchOne(db, sql: "SELECT sequence FROM audit_log ORDER BY sequence DESC LIMIT 1 OFFSET ?",
                                           arguments: [count - 1])
            return first.map { $0 - 1 } ?? 0
        }
    }

    /// The newest `count` audit lines, oldest first.
    public func recentAuditLog(_ count: Int) throws(PermissionStoreError) -> [AuditRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM audit_log ORDER BY sequence DESC LIMIT ?", arguments: [count])
                .map(Self.audit).reversed()
        }
    }

    // MARK: - Health

    /// The result of SQLite's `PRAGMA integrity_check`: `["ok"]` for a healthy file.
    public func integrityCheck() throws(PermissionStoreError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// The migrations applied to this store, in order.
    public func appliedMigrations() throws(PermissionStoreError) -> [String] {
        try read { db in try StoreSchema.migrator.completedMigrations(db) }
    }

    /// The SQLite journal mode in force (`wal`).
    public func journalMode() throws(PermissionStoreError) -> String {
        try read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    // MARK: - Opening

    /// The most each connection keeps in SQLite's page cache, in KiB.
    static let pageCacheKiB = 64

    private static func configuration(readonly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.label = "HeraldPermissionStore"
        // Only this daemon writes the store (the state directory's lock keeps others off), so a lock held for long is
        // someone's sqlite3 session: the daemon, single-threaded, waits a second for it at most.
        configuration.busyMode = .timeout(1)
        configuration.foreignKeysEnabled = true
        // The store is small and read mostly: SQLite's default 2 MiB page cache per connection would only let the
        // daemon's heap creep up as the audit log turns over. The file's pages stay in the kernel's page cache.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(pageCacheKiB)") }
        if !readonly {
            // Commits reach the disk before a call returns: a grant reported as done survives power loss too.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        }
        return configuration
    }

    /// Refuses an existing file that is not a healthy Herald store, without writing to it.
    private static func checkExisting(_ path: String) throws(PermissionStoreError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadable(path: path, reason: "permission denied or not a regular file")
        }
        let header: Data
        do {
            header = try handle.read(upToCount: 100) ?? Data()
            try handle.close()
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        if header.isEmpty { throw .notAHeraldStore(path: path, reason: "the file is empty") }
        guard header.count == 100, Array(header.prefix(16)) == sqliteHeader else {
            throw .notAHeraldStore(path: path, reason: "not an SQLite database")
        }
        guard FileManager.default.isWritableFile(atPath: path) else {
            throw .unreadable(path: path, reason: "the file is not writable")
        }
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration(readonly: true))
            defer { try? queue.close() }
            try queue.read { db in
                let id = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                guard id == StoreSchema.applicationID else {
                    throw PermissionStoreError.notAHeraldStore(
                        path: path, reason: id == 0 ? "an SQLite database of another program"
                            : "an SQLite database of another program (application id \(id))")
                }
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw PermissionStoreError.corrupt(path: path, reason: check.prefix(3).joined(separator: "; "))
                }
                let known = Set(StoreSchema.migrator.migrations)
                let applied = try StoreSchema.migrator.appliedIdentifiers(db)
                let unknown = applied.subtracting(known)
                if !unknown.isEmpty {
                    throw PermissionStoreError.newerSchema(path: path, unknownMigrations: unknown.sorted())
                }
            }
        } catch let error as PermissionStoreError {
            throw error
        } catch {
            throw mapOpenError(error, path: path)
        }
    }

    private static func mapOpenError(_ error: any Error, path: String) -> PermissionStoreError {
        if let error = error as? PermissionStoreError { return error }
        if let error = error as? DatabaseError {
            let message = error.message ?? error.description
            switch error.resultCode {
            case .SQLITE_CORRUPT: return .corrupt(path: path, reason: message)
            case .SQLITE_NOTADB: return .notAHeraldStore(path: path, reason: message)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
                return .unreadable(path: path, reason: message)
            default: return .database(message)
            }
        }
        return .database(String(describing: error))
    }

    // MARK: - Rows

    private func write<T>(_ body: (Database) throws -> T) throws(PermissionStoreError) -> T {
        do {
            return try pool.write(body)
        } catch {
            throw Self.mapOpenError(error, path: path)
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(PermissionStoreError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.mapOpenError(error, path: path)
        }
    }

    private func now() -> Double { clock().timeIntervalSince1970 }

    private func appendOperatorAction(_ db: Database, _ event: AuditEvent) throws {
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
    private func insertPending(_ db: Database, _ request: PendingRequest, now: Double) throws -> StoredPendingRequest? {
        if try Self.fetchDecision(db, request.appID) != nil { return nil }
        let request = request.folded
        let app = request.appID.rawValue
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            INSERT INTO pending_request (app_id, app_name, usage_description, operation, service_type, subject,
                                         latest_subject, first_seen, last_seen, count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (app_id, operation, subject) DO UPDATE SET
                app_name = excluded.app_name, usage_description = excluded.usage_description,
                service_type = excluded.service_type, latest_subject = excluded.latest_subject,
                last_seen = excluded.last_seen, count = count + 1
            RETURNING *
            """), arguments: [app, request.appName, request.usageDescription, request.operation.rawValue,
                              request.serviceType, request.subject, request.latestSubject, now, now])
        try db.cachedStatement(sql: """
            DELETE FROM pending_request WHERE id IN (
                SELECT id FROM pending_request WHERE app_id = ? ORDER BY last_seen DESC, id DESC LIMIT -1 OFFSET ?)
            """).execute(arguments: [app, options.pendingRequestsPerApp])
        var total = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM pending_request")) ?? 0
        while total > options.pendingRequestLimit {
            let own = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM pending_request WHERE app_id = ?"),
                                       arguments: [app]) ?? 0
            if own > 1 {
                try db.cachedStatement(sql: """
                    DELETE FROM pending_request WHERE id = (
                        SELECT id FROM pending_request WHERE app_id = ? ORDER BY last_seen, id LIMIT 1)
                    """).execute(arguments: [app])
            } else {
                try db.cachedStatement(sql: """
                    DELETE FROM pending_request WHERE id = (
                        SELECT p.id FROM pending_request AS p
                        JOIN (SELECT app_id, count(*) AS held FROM pending_request GROUP BY app_id) AS a USING (app_id)
                        WHERE p.app_id <> ? ORDER BY a.held DESC, p.last_seen, p.id LIMIT 1)
                    """).execute(arguments: [app])
            }
            guard db.changesCount > 0 else { break }
            total -= db.changesCount
        }
        guard var stored = row.flatMap(Self.pending) else { return nil }
        stored.isNew = stored.count == 1
        return stored
    }

    private static func fetchManifests(_ db: Database, path: String, id: AppID? = nil) throws -> [StoredManifest] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT * FROM manifest \(id == nil ? "" : "WHERE app_id = ?") ORDER BY app_id",
            arguments: StatementArguments(id.map { [$0.rawValue] } ?? []))
        return try rows.map { row in
            let json: String = row["manifest_json"]
            let manifest: Manifest
            do throws(ManifestError) {
                manifest = try ManifestParser.parse(Array(json.utf8), format: .json).manifest
            } catch {
                throw PermissionStoreError.corrupt(
                    path: path, reason: "the stored manifest of \(row["app_id"] as String) does not validate: "
                        + error.problems.map(\.description).joined(separator: "; "))
            }
            return StoredManifest(manifest: manifest, addedAt: Date(timeIntervalSince1970: row["added_at"]),
                                  updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
        }
    }

    private static func fetchDecision(_ db: Database, _ id: AppID) throws -> DecisionRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM decision WHERE app_id = ?", arguments: [id.rawValue]),
              let stored = try? AppID(row["app_id"] as String), let decision = AppDecision(rawValue: row["decision"])
        else { return nil }
        return DecisionRecord(app: stored, decision: decision, time: Date(timeIntervalSince1970: row["decided_at"]),
                              decidedBy: row["decided_by"])
    }

    private static func pending(_ row: Row) -> StoredPendingRequest? {
        guard let id = try? AppID(row["app_id"] as String),
              let operation = PermissionOperation(rawValue: row["operation"])
        else { return nil }
        let request = PendingRequest(appID: id, appName: row["app_name"], usageDescription: row["usage_description"],
                                     operation: operation, serviceType: row["service_type"], subject: row["subject"],
                                     latestSubject: row["latest_subject"])
        return StoredPendingRequest(request: request, firstSeen: Date(timeIntervalSince1970: row["first_seen"]),
                                    lastSeen: Date(timeIntervalSince1970: row["last_seen"]), count: row["count"])
    }

    private static func audit(_ row: Row) -> AuditRecord {
        let app: String? = row["app_id"]
        let event = AuditEvent(app: app.flatMap { try? AppID($0) }, operation: row["operation"],
                               serviceType: row["service_type"], decision: row["decision"], reason: row["reason"],
                               detail: row["detail"])
        let uid: Int64? = row["uid"]
        return AuditRecord(sequence: row["sequence"], time: Date(timeIntervalSince1970: row["time"]), app: app,
                           event: event, kind: AuditLineKind(rawValue: row["class"]) ?? .request,
                           uid: uid.flatMap { UInt32(exactly: $0) }, count: row["count"])
    }
}

extension String {
    /// `replacement` when the string is empty.
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
