import CSQLite

/// The permission store's schema and its migrations. Migrations are append-only: a released migration is never
/// edited; a change of schema is a new migration after the last.
///
/// The migrations applied to a store are recorded by identifier in its `grdb_migrations` table, the table that
/// Herald's stores have had from the first release (it is named after the library that first kept it): stores of
/// every version record their schema the same way, and an older Herald still recognises a store that a newer one
/// migrated, or refuses it as newer, by the same table.
enum StoreSchema {
    /// SQLite's `application_id` header field for Herald stores: "HRLD" in ASCII. It tells a Herald store from
    /// any other SQLite file before anything is read or written.
    static let applicationID: Int32 = 0x4852_4C44

    /// The table that records the applied migrations, one row per identifier.
    static let migrationsTable = "grdb_migrations"

    /// One change of schema, applied once to each store.
    struct Migration {
        let identifier: String
        let sql: String
    }

    /// The identifiers of the known migrations, in order.
    static var identifiers: [String] { migrations.map(\.identifier) }

    /// The migrations, in order.
    static let migrations: [Migration] = [
        Migration(
            identifier: "1-initial",
            sql: """
                PRAGMA application_id = \(applicationID);
                CREATE TABLE manifest (
                    app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
                    manifest_json TEXT NOT NULL,
                    added_at REAL NOT NULL,
                    updated_at REAL NOT NULL
                );
                CREATE TABLE decision (
                    app_id TEXT NOT NULL PRIMARY KEY COLLATE NOCASE
                        REFERENCES manifest(app_id) ON DELETE CASCADE,
                    decision TEXT NOT NULL CHECK (decision IN ('granted', 'denied')),
                    decided_at REAL NOT NULL,
                    decided_by TEXT NOT NULL
                );
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
                    count INTEGER NOT NULL CHECK (count >= 1),
                    UNIQUE (app_id, operation, subject)
                );
                CREATE INDEX pending_request_by_last_seen ON pending_request(last_seen);
                CREATE TABLE audit_log (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    time REAL NOT NULL,
                    app_id TEXT,
                    operation TEXT NOT NULL,
                    service_type TEXT,
                    decision TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    detail TEXT NOT NULL
                );
                """),
        // Operator actions (class 0) and decisions on apps' requests (class 1) are kept and trimmed apart, so
        // that no amount of app traffic pushes an operator action out of the log. `uid` is the caller's for
        // request decisions; `count` is how many decisions a line stands for (more than 1 for a line that
        // folds one user's decisions of one reason within a window). An app's address lookups are one pending
        // request, which remembers the latest name asked for.
        Migration(
            identifier: "2-audit-retention",
            sql: """
                ALTER TABLE audit_log ADD COLUMN class INTEGER NOT NULL DEFAULT 1 CHECK (class IN (0, 1));
                ALTER TABLE audit_log ADD COLUMN uid INTEGER;
                ALTER TABLE audit_log ADD COLUMN count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1);
                UPDATE audit_log SET class = 0
                    WHERE operation IN ('app-add', 'app-update', 'app-remove', 'grant', 'deny', 'reset');
                CREATE INDEX audit_log_by_class ON audit_log(class, sequence);
                CREATE TABLE audit_retention (
                    class INTEGER NOT NULL PRIMARY KEY,
                    lines INTEGER NOT NULL
                );
                INSERT INTO audit_retention (class, lines) VALUES
                    (0, (SELECT count(*) FROM audit_log WHERE class = 0)),
                    (1, (SELECT count(*) FROM audit_log WHERE class = 1));
                CREATE TABLE audit_fold (
                    uid INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    window_start REAL NOT NULL,
                    lines INTEGER NOT NULL,
                    folded INTEGER NOT NULL,
                    line_sequence INTEGER,
                    PRIMARY KEY (uid, reason)
                );
                ALTER TABLE pending_request ADD COLUMN latest_subject TEXT;
                CREATE INDEX pending_request_by_app ON pending_request(app_id, last_seen);
                INSERT INTO pending_request (app_id, app_name, usage_description, operation, service_type, subject,
                                             latest_subject, first_seen, last_seen, count)
                    SELECT app_id, app_name, usage_description, operation, NULL, 'address lookups', subject,
                           min(first_seen), max(last_seen), sum(count)
                    FROM pending_request WHERE operation = 'address-lookup' GROUP BY app_id;
                DELETE FROM pending_request WHERE operation = 'address-lookup' AND subject <> 'address lookups';
                """),
    ]

    // MARK: - Applying

    /// The identifiers recorded in the store's migrations table, known or not; none when it has no such table.
    static func appliedIdentifiers(_ db: SQLiteConnection) throws -> Set<String> {
        let tables = try db.texts("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [migrationsTable])
        guard !tables.isEmpty else { return [] }
        return Set(try db.texts("SELECT identifier FROM \(migrationsTable)"))
    }

    /// The known migrations applied to the store, in order, up to the first that is not.
    static func completedMigrations(_ db: SQLiteConnection) throws -> [String] {
        let applied = try appliedIdentifiers(db)
        return Array(identifiers.prefix { applied.contains($0) })
    }

    /// Applies the migrations the store lacks, in order, each in a transaction of its own with the record that it
    /// was applied. Foreign keys are off while a migration runs (SQLite's procedure for altering tables) and
    /// checked before it commits.
    static func migrate(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS \(migrationsTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = try appliedIdentifiers(db)
        for migration in migrations where !applied.contains(migration.identifier) {
            try db.execute("PRAGMA foreign_keys = OFF")
            defer { try? db.execute("PRAGMA foreign_keys = ON") }
            try db.transaction(.immediate) {
                try db.execute(migration.sql)
                try db.execute("INSERT INTO \(migrationsTable) (identifier) VALUES (?)", [migration.identifier])
                let violations = try db.rows("PRAGMA foreign_key_check") { row in
                    "\(row.text(at: 0)) row \(row.int64(at: 1)) refers to a missing row of \(row.text(at: 2))"
                }
                if !violations.isEmpty {
                    // SQLITE_CONSTRAINT_FOREIGNKEY: the primary code with extended code 3.
                    throw SQLiteError(
                        code: SQLITE_CONSTRAINT | 3 << 8,
                        message: "migration \(migration.identifier) broke foreign keys: "
                            + violations.prefix(3).joined(separator: "; "))
                }
            }
        }
    }
}
