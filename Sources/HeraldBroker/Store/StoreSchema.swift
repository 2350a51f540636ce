import GRDB

/// The permission store's schema and its migrations. Migrations are append-only: a released migration is never
/// edited; a change of schema is a new migration after the last.
enum StoreSchema {
    /// SQLite's `application_id` header field for Herald stores: "HRLD" in ASCII. It tells a Herald store from
    /// any other SQLite file before anything is read or written.
    static let applicationID: Int32 = 0x4852_4C44

    /// The migrations, in order.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-initial") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: """
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
                """)
        }
        migrator.registerMigration("2-audit-retention") { db in
            // Operator actions (class 0) and decisions on apps' requests (class 1) are kept and trimmed apart, so
            // that no amount of app traffic pushes an operator action out of the log. `uid` is the caller's for
            // request decisions; `count` is how many decisions a line stands for (more than 1 for a line that
            // folds one user's decisions of one reason within a window). An app's address lookups are one pending
            // request, which remembers the latest name asked for.
            try db.execute(sql: """
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
                """)
        }
        return migrator
    }
}
