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
        return migrator
    }
}
