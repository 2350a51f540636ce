import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers SIGTERM, SIGINT and SIGHUP through a file descriptor (signalfd), so that the event loop handles
/// them like any other input instead of in an asynchronous signal handler.
package final class SignalSource {
    package let fd: Int32

    /// Blocks the signals for normal delivery (in this thread and those it starts) and opens the descriptor.
    package init(signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]) throws(SystemError) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        guard pthread_sigmask(SIG_BLOCK, &mask, nil) == 0 else { throw SystemError("pthread_sigmask") }
        let fd = signalfd(-1, &mask, Int32(SFD_NONBLOCK) | Int32(SFD_CLOEXEC))
        guard fd >= 0 else { throw SystemError("signalfd") }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The signals received since the last call, in order.
    package func take() -> [Int32] {
        var signals: [Int32] = []
        var info = [UInt8](repeating: 0, count: 128)  // struct signalfd_siginfo
        while read(fd, &info, info.count) == info.count {
            signals.append(Int32(info[0]) | Int32(info[1]) << 8 | Int32(info[2]) << 16 | Int32(info[3]) << 24)
        }
        return signals
    }
}
