import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ctrl-C and `kill`: SIGINT and SIGTERM only set a flag (all a handler may safely do), and interrupt the
/// poll the command is waiting in, so that it can withdraw, close its connection and exit cleanly.
enum Interruption {
    /// The signal received, or 0.
    private static let received = Atomic<Int32>(0)

    /// Installs the handlers (without SA_RESTART, so that a blocked poll returns at once).
    static func install() {
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                Interruption.received.store(signal, ordering: .relaxed)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, nil)
        }
    }

    /// The signal that asked the command to stop, if any.
    static var signal: Int32? {
        let value = received.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
