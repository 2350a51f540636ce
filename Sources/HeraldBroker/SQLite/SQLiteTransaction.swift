/// How a transaction takes its locks (SQLite's `BEGIN DEFERRED` or `BEGIN IMMEDIATE`).
enum SQLiteTransactionKind: String, Sendable {
    /// Locks as statements need them: a read transaction sees one snapshot of the file throughout.
    case deferred = "DEFERRED"
    /// Takes the write lock at once, so that a write transaction never fails half-way on another writer's lock.
    case immediate = "IMMEDIATE"
}

extension SQLiteConnection {
    /// Runs `body` in one transaction: committed when it returns, rolled back when it or the commit throws, so
    /// that either everything it did is in the file or nothing is.
    func transaction<T>(_ kind: SQLiteTransactionKind, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue) TRANSACTION")
        do {
            let value = try body()
            try execute("COMMIT TRANSACTION")
            return value
        } catch {
            // SQLite may have rolled back already (after some errors it does so by itself).
            if isInTransaction { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }
}
