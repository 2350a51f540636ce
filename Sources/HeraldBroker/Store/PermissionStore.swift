import Foundation
import GRDB

/// The permission store (BRIEF §1, "Store"): registered manifests, decisions, pending requests and the audit
/// log, in one SQLite file in WAL mode with full synchronous commits.
///
/// Every method that changes something runs in one transaction and returns only after it has committed, so a
/// change reported as done survives a crash or `kill -9` of the daemon. Opening never recreates or rewrites an
/// existing file that is not a healthy Herald store: it refuses with an error naming the problem.
public final class PermissionStore: Sendable {
    /// Limits that keep the store bounded whatever the clients do.
    public struct Options: Hashable, Sendable {
        /// The audit log keeps this many newest lines.
        public var auditLogLimit: Int
        /// At most this many pending requests are kept; the least recently seen go first.
        public var pendingRequestLimit: Int

        public init(auditLogLimit: Int = 10_000, pendingRequestLimit: Int = 1_000) {
            self.auditLogLimit = max(1, auditLogLimit)
            self.pendingRequestLimit = max(1, pendingRequestLimit)
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
            try pool.writeWithoutTransaction(RecordingSQL.prepare)
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
                try self.appendAudit(db, AuditEvent(
                    app: manifest.id, operation: "app-add", decision: decision.rawValue, reason: "operator",
                    detail: "registered \(ManifestDocument.quoted(manifest.name)) by \(actor); types: "
                        + (manifest.bonjourServices.map(\.description).joined(separator: " ")).ifEmpty("none")))
                return ManifestChange.added
            }
            if old.manifest.jsonText == json { return ManifestChange.unchanged }
            let summary = manifest.changes(from: old.manifest).joined(separator: "; ")
            try db.execute(sql: "UPDATE manifest SET app_id = ?, manifest_json = ?, updated_at = ? WHERE app_id = ?",
                           arguments: [manifest.id.rawValue, json, now, manifest.id.rawValue])
            try self.appendAudit(db, AuditEvent(
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
            try self.appendAudit(db, AuditEvent(
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
            try self.appendAudit(db, AuditEvent(
                app: id, operation: operation, decision: decision.rawValue, reason: "operator",
                detail: "by \(actor); was \(previous.rawValue)"))
            return DecisionChange(app: id, previous: previous, current: decision)
        }
    }

    // MARK: - Requests and the audit log

    /// Records a pending request, or counts a repeat of one (same app, operation and subject). Nothing is
    /// recorded, and nil returned, when the app has been decided meanwhile.
    @discardableResult
    public func recordPending(_ request: PendingRequest) throws(PermissionStoreError) -> StoredPendingRequest? {
        try write { db in try self.insertPending(db, request) }
    }

    /// Records the audit line of a decision and, when there is one, its pending request, in one transaction.
    public func record(_ decision: PermissionDecision, caller: CallerIdentity) throws(PermissionStoreError) {
        try write { db in
            try self.appendAudit(db, decision.auditEvent(caller: caller))
            if let pending = decision.pendingRequest { _ = try self.insertPending(db, pending) }
        }
    }

    /// Records many decisions (audit lines and pending requests) in one transaction; returns the pending
    /// requests as stored after it, in the order recorded.
    @discardableResult
    public func record(_ batch: [(decision: PermissionDecision, caller: CallerIdentity)])
    throws(PermissionStoreError) -> [StoredPendingRequest] {
        guard !batch.isEmpty else { return [] }
        return try write { db in
            var pending: [StoredPendingRequest] = []
            for entry in batch {
                try self.appendAudit(db, entry.decision.auditEvent(caller: entry.caller))
                if let request = entry.decision.pendingRequest, let stored = try self.insertPending(db, request) {
                    pending.append(stored)
                }
            }
            return pending
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

    /// Appends lines to the audit log, dropping the oldest beyond ``Options/auditLogLimit``.
    public func appendAudit(_ events: [AuditEvent]) throws(PermissionStoreError) {
        try write { db in
            for event in events { try self.appendAudit(db, event) }
        }
    }

    /// Audit lines with a sequence number above `sequence`, oldest first, at most `limit` of them.
    public func auditLog(after sequence: Int64 = 0, limit: Int = .max) throws(PermissionStoreError) -> [AuditRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM audit_log WHERE sequence > ? ORDER BY sequence LIMIT ?",
                             arguments: [sequence, Int64(min(limit, Int(Int64.max)))]).map(Self.audit)
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

    private func appendAudit(_ db: Database, _ event: AuditEvent) throws {
        try db.cachedStatement(sql: RecordingSQL.insertAudit).execute(arguments: [
            now(), event.app?.rawValue, event.operation, event.serviceType, event.decision, event.reason, event.detail,
        ])
        try db.cachedStatement(sql: RecordingSQL.trimAudit)
            .execute(arguments: [db.lastInsertedRowID - Int64(options.auditLogLimit)])
    }

    private func insertPending(_ db: Database, _ request: PendingRequest) throws -> StoredPendingRequest? {
        if try Self.fetchDecision(db, request.appID) != nil { return nil }
        let now = now()
        let row = try Row.fetchOne(db, sql: """
            INSERT INTO pending_request (app_id, app_name, usage_description, operation, service_type, subject,
                                         first_seen, last_seen, count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
            ON CONFLICT (app_id, operation, subject) DO UPDATE SET
                app_name = excluded.app_name, usage_description = excluded.usage_description,
                service_type = excluded.service_type, last_seen = excluded.last_seen, count = count + 1
            RETURNING *
            """, arguments: [request.appID.rawValue, request.appName, request.usageDescription,
                             request.operation.rawValue, request.serviceType, request.subject, now, now])
        try db.execute(sql: """
            DELETE FROM pending_request WHERE id IN (
                SELECT id FROM pending_request ORDER BY last_seen DESC, id DESC LIMIT -1 OFFSET ?)
            """, arguments: [options.pendingRequestLimit])
        return row.flatMap(Self.pending)
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
                                     operation: operation, serviceType: row["service_type"], subject: row["subject"])
        return StoredPendingRequest(request: request, firstSeen: Date(timeIntervalSince1970: row["first_seen"]),
                                    lastSeen: Date(timeIntervalSince1970: row["last_seen"]), count: row["count"])
    }

    private static func audit(_ row: Row) -> AuditRecord {
        let app: String? = row["app_id"]
        let event = AuditEvent(app: app.flatMap { try? AppID($0) }, operation: row["operation"],
                               serviceType: row["service_type"], decision: row["decision"], reason: row["reason"],
                               detail: row["detail"])
        return AuditRecord(sequence: row["sequence"], time: Date(timeIntervalSince1970: row["time"]), app: app,
                           event: event)
    }
}

extension String {
    /// `replacement` when the string is empty.
    fileprivate func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
