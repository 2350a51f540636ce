#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An ``SQLiteConnection`` that several threads may use, one at a time: each use holds a mutex.
///
/// `@unchecked Sendable` is safe here because the connection is reached only through ``use(_:)``, which holds the
/// mutex for the whole call, and the connection is not handed to anything that outlives that call: the closures
/// given to ``use(_:)`` run synchronously and are not stored.
final class SharedConnection: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ connection: SQLiteConnection) {
        self.connection = connection
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the connection, no other thread using it meanwhile. Not reentrant: `body` must not call
    /// `use` again.
    func use<T, E: Error>(_ body: (SQLiteConnection) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(connection)
    }
}
