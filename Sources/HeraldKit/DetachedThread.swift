#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A thread of its own for blocking work, started detached: nobody joins it, and it ends when its body returns.
enum DetachedThread {
    /// The body's box, handed through `pthread_create`'s one pointer.
    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void

        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Runs `body` on a new thread called `name` (cut to the kernel's 15 bytes); returns the `errno` of
    /// `pthread_create` when no thread could be started, and then `body` never runs.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Int32? {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, entry, box)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return result
        }
        pthread_detach(thread)
        return nil
    }

    /// What a new thread runs: the body in the box it is handed, which it then releases.
    private static let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
        guard let raw else { return nil }
        let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
        nameThisThread(body.name)
        body.run()
        return nil
    }

    /// Names the calling thread for ps, top and debuggers, as `pthread_setname_np` does (which Swift does not see):
    /// by writing its `comm`, which the kernel cuts to 15 bytes. Best effort: a thread without a name runs the same.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
