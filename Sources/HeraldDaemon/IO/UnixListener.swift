#if canImport(Glibc)
    import Glibc
#endif

/// A listening Unix stream socket watched by the loop, shared by the app, control and NSS servers.
///
/// Made at a path, it owns the file there and removes it when it goes. Passed by the service manager (socket
/// activation), the file belongs to the service manager and is left alone. Each time connections wait, all of
/// them are accepted (non-blocking, close-on-exec) and handed to ``accepted`` together.
final class UnixListener {
    let path: String
    private let fd: Int32
    private let ownsPath: Bool
    private let loop: EventLoop
    /// Takes the connections that one readiness of the socket brought; until it is set, they are closed.
    var accepted: ([Int32]) -> Void = { connections in connections.forEach { close($0) } }

    /// Listens on `path` with file mode `mode` (and group `group`, if given), or on `inherited`.
    init(
        path: String, inherited: Int32? = nil, mode: mode_t = 0o666, group: gid_t? = nil,
        loop: EventLoop
    ) throws(SystemError) {
        // An inherited socket is wherever the service manager bound it, which the log and status should say.
        self.path = inherited.flatMap(Self.boundPath(of:)) ?? path
        self.loop = loop
        if let inherited {
            _ = fcntl(inherited, F_SETFL, fcntl(inherited, F_GETFL) | O_NONBLOCK)
            fd = inherited
            ownsPath = false
        } else {
            fd = try UnixSocket.listen(at: path, mode: mode)
            ownsPath = true
            if let group { _ = chown(path, uid_t.max, group) }
        }
        // Every message on every connection then says who sent it: the servers judge the sender of each request,
        // not only the process that connected.
        UnixSocket.passCredentials(fd)
        do {
            try loop.register(fd, for: .readable) { [unowned self] _ in
                var connections: [Int32] = []
                while let connection = UnixSocket.accept(self.fd) { connections.append(connection) }
                if !connections.isEmpty { self.accepted(connections) }
            }
        } catch {
            close(fd)
            if ownsPath { unlink(path) }
            throw error
        }
    }

    deinit {
        loop.unregister(fd)
        close(fd)
        if ownsPath { unlink(path) }
    }

    /// The file a Unix socket is bound to (getsockname), or nil for an unnamed or abstract one.
    static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.hasPrefix("/") ? path : nil
    }
}
