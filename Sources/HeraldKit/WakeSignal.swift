#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A pipe that one thread writes to in order to wake another out of `poll`: how an operation's reader
/// thread learns that the operation was cancelled.
///
/// `Sendable` without an escape: the stored properties are immutable `Int32`s, and the descriptors are
/// closed only in `deinit`, when no other reference (and so no concurrent `signal()`) can exist.
final class WakeSignal: Sendable {
    /// The descriptor to watch for input; -1 when the system refused a pipe.
    let descriptor: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
            descriptor = ends[0]
            writeEnd = ends[1]
        } else {
            descriptor = -1
            writeEnd = -1
        }
    }

    deinit {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            Glibc.close(writeEnd)
        }
    }

    /// Makes `descriptor` readable from now on. Signalling again is harmless (the byte is never read; a
    /// full pipe just refuses the write).
    func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(writeEnd, &byte, 1)
    }
}
