import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Unix stream sockets: a listening socket at a path, and the reads and writes of accepted connections,
/// including file descriptors passed with SCM_RIGHTS (the dnssd protocol's error-return sockets).
package enum UnixSocket {
    /// Creates, binds and listens on `path` with the given permission bits. A stale socket file left by a
    /// previous run is replaced; a path held by a live daemon is refused.
    package static func listen(at path: String, mode: mode_t = 0o666, backlog: Int32 = 128) throws(SystemError) -> Int32
    {
        guard path.utf8.count < 108 else { throw SystemError("socket path too long (\(path))", code: ENAMETOOLONG) }
        try makeParentDirectory(of: path)
        if access(path, F_OK) == 0 {
            // Someone answering there means another daemon is running; otherwise the file is stale.
            if let probe = try? connect(to: path) {
                close(probe)
                throw SystemError("another daemon is already listening on \(path)", code: EADDRINUSE)
            }
            unlink(path)
        }
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket(AF_UNIX)") }
        var address = makeAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = SystemError("bind(\(path))")
            close(fd)
            throw error
        }
        chmod(path, mode)
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError("listen(\(path))")
            close(fd)
            throw error
        }
        return fd
    }

    /// Connects to the socket at `path`. Blocking, unless `nonBlocking`: then a listener whose backlog is full
    /// fails the call (EAGAIN) instead of holding the caller.
    package static func connect(to path: String, nonBlocking: Bool = false) throws(SystemError) -> Int32 {
        let flags =
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(AF_UNIX, flags, 0)
        guard fd >= 0 else { throw SystemError("socket(AF_UNIX)") }
        var address = makeAddress(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let error = SystemError("connect(\(path))")
            close(fd)
            throw error
        }
        return fd
    }

    /// Connects, without blocking, to the socket at `path` if it is a socket owned by `owner` (any owner when nil),
    /// not a symbolic link to one. The file is opened once, checked, and connected to through that descriptor
    /// (/proc/self/fd/N), so nothing can be swapped in between the check and the connect.
    package static func connectChecked(to path: String, owner: UInt32?) throws(SystemError) -> Int32 {
        let file = herald_open_path_nofollow(path)
        guard file >= 0 else { throw SystemError("open(\(path))") }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw SystemError("fstat(\(path))") }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw SystemError("\(path) is not a socket", code: ENOTSOCK) }
        if let owner, status.st_uid != owner {
            throw SystemError("\(path) belongs to uid \(status.st_uid), not \(owner)", code: EACCES)
        }
        return try connect(to: "/proc/self/fd/\(file)", nonBlocking: true)
    }

    /// Creates the directory holding `path` (and its parents) when missing, mode 0755.
    static func makeParentDirectory(of path: String) throws(SystemError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        try Directories.make(String(path[..<slash]), mode: 0o755, parentMode: 0o755)
    }

    static func makeAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        return address
    }

    /// Accepts one pending connection (non-blocking), or nil.
    package static func accept(_ listener: Int32) -> Int32? {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else {
            if errno == EMFILE || errno == ENFILE { shedOneConnection(listener) }
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// A descriptor kept in reserve: when the process runs out of descriptors, a waiting connection would keep
    /// a level-triggered listener readable for ever (a busy loop). The reserve is freed to accept that connection
    /// and close it at once (the client sees the daemon hang up), then taken again.
    nonisolated(unsafe) private static var reserve: Int32 = open("/dev/null", O_RDONLY | O_CLOEXEC)

    private static func shedOneConnection(_ listener: Int32) {
        guard reserve >= 0 else { return }
        close(reserve)
        let fd = Glibc.accept(listener, nil, nil)
        if fd >= 0 { close(fd) }
        reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// Raises the soft limit on open descriptors to the hard limit (at most `wanted`), so that the configured
    /// client limits, not the default of 1024, decide how many apps can connect. Returns the limit in force.
    /// Also sets the reserve descriptor aside (a lazily opened one would be opened too late: when none is left).
    @discardableResult
    package static func raiseDescriptorLimit(to wanted: UInt = 65_536) -> UInt {
        _ = reserve
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let target = min(UInt(limit.rlim_max), wanted)
        if UInt(limit.rlim_cur) < target {
            limit.rlim_cur = rlim_t(target)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? UInt(limit.rlim_cur) : 0
    }

    /// Who sent the bytes of one read, as the kernel attached it (SCM_CREDENTIALS, and SCM_PIDFD where the kernel
    /// has it) on a socket that asked for it (``passCredentials(_:)``). The kernel never merges the bytes of two
    /// senders into one read. The receiver owns `pidfd` and must close it.
    package struct Sender: Hashable, Sendable {
        /// The sending process (its thread group): filled in by the kernel, which lets no unprivileged process
        /// claim another's.
        package var pid: Int32
        /// The sender's real uid and gid at the time it sent (one of its real, effective or saved ids if it chose
        /// to say so).
        package var uid: UInt32
        package var gid: UInt32
        /// A pidfd naming the sending process itself, so that what is read about it in `/proc` can be checked.
        package var pidfd: Int32?
    }

    /// The result of one read.
    package enum ReadResult {
        case data([UInt8], descriptors: [Int32], sender: Sender?)
        case wouldBlock
        case closed
    }

    /// Makes the kernel attach the sender to every message on `fd` (a listening socket: its connections inherit it).
    @discardableResult
    package static func passCredentials(_ fd: Int32) -> Bool { herald_pass_credentials(fd) >= 0 }

    /// Reads up to `maximum` bytes, any descriptors passed with them and their sender.
    package static func read(_ fd: Int32, maximum: Int) -> ReadResult {
        var buffer = [UInt8](repeating: 0, count: max(1, maximum))
        var control = [UInt8](repeating: 0, count: 256)
        var controlLength = 0
        let count = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes -> Int in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    let received = recvmsg(fd, &header, Int32(MSG_CMSG_CLOEXEC))
                    if received >= 0 { controlLength = min(Int(header.msg_controllen), controlBytes.count) }
                    return received
                }
            }
        }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .closed }
        let received = controlMessages(in: Array(control[0..<controlLength]))
        if count == 0 {
            for fd in received.descriptors { close(fd) }
            if let pidfd = received.sender?.pidfd { close(pidfd) }
            return .closed
        }
        return .data(Array(buffer[0..<count]), descriptors: received.descriptors, sender: received.sender)
    }

    /// SCM_RIGHTS descriptors in received control data (`struct cmsghdr` then ints).
    static func passedDescriptors(in control: [UInt8]) -> [Int32] {
        let received = controlMessages(in: control)
        if let pidfd = received.sender?.pidfd { close(pidfd) }
        return received.descriptors
    }

    /// The descriptors (SCM_RIGHTS) and the sender (SCM_CREDENTIALS, SCM_PIDFD) in received control data.
    static func controlMessages(in control: [UInt8]) -> (descriptors: [Int32], sender: Sender?) {
        var descriptors: [Int32] = []
        var sender: Sender?
        var pidfd: Int32?
        let headerSize = MemoryLayout<Int>.size + 8
        func int32(at position: Int) -> Int32 {
            Int32(control[position]) | Int32(control[position + 1]) << 8
                | Int32(control[position + 2]) << 16 | Int32(control[position + 3]) << 24
        }
        var offset = 0
        while offset + headerSize <= control.count {
            var length = 0
            for index in 0..<MemoryLayout<Int>.size { length |= Int(control[offset + index]) << (8 * index) }
            let level = Int32(control[offset + 8]) | Int32(control[offset + 9]) << 8
            let type = Int32(control[offset + 12]) | Int32(control[offset + 13]) << 8
            guard length >= headerSize, offset + length <= control.count else { break }
            let data = offset + headerSize
            if level == SOL_SOCKET {
                switch type {
                case Int32(SCM_RIGHTS):
                    var position = data
                    while position + 4 <= offset + length {
                        descriptors.append(int32(at: position))
                        position += 4
                    }
                case Self.scmCredentials where length >= headerSize + 12:
                    sender = Sender(
                        pid: int32(at: data), uid: UInt32(bitPattern: int32(at: data + 4)),
                        gid: UInt32(bitPattern: int32(at: data + 8)))
                case Self.scmPidfd where length >= headerSize + 4:
                    if let earlier = pidfd { close(earlier) }
                    pidfd = int32(at: data)
                default:
                    break
                }
            }
            offset += ControlMessages.align(length)
        }
        if sender != nil { sender?.pidfd = pidfd } else if let pidfd { close(pidfd) }
        return (descriptors, sender)
    }

    /// The control message types of Linux's `<bits/socket.h>` (SCM_PIDFD: Linux 6.5).
    static let scmCredentials: Int32 = 2
    static let scmPidfd: Int32 = 4

    /// Writes as much as the socket takes now; returns the number of bytes written, or nil if the peer is gone.
    package static func write(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return 0 }
        let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : nil }
        return written
    }

    /// Sends `bytes` with `descriptor` attached (SCM_RIGHTS), blocking until sent.
    package static func send(_ fd: Int32, _ bytes: [UInt8], passing descriptor: Int32) -> Bool {
        let headerSize = MemoryLayout<Int>.size + 8
        var control = [UInt8](repeating: 0, count: ControlMessages.align(headerSize + 4))
        let length = headerSize + 4
        for index in 0..<MemoryLayout<Int>.size { control[index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
        control[8] = UInt8(SOL_SOCKET & 0xFF)
        control[9] = UInt8((SOL_SOCKET >> 8) & 0xFF)
        control[12] = UInt8(Int32(SCM_RIGHTS) & 0xFF)
        for index in 0..<4 { control[headerSize + index] = UInt8(truncatingIfNeeded: descriptor >> (8 * index)) }
        let sent = bytes.withUnsafeBytes { data in
            control.withUnsafeMutableBytes { controlBytes -> Int in
                var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress), iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    return sendmsg(fd, &header, Int32(MSG_NOSIGNAL))
                }
            }
        }
        return sent == bytes.count
    }

    /// The peer's process, user and group (SO_PEERCRED), as the kernel recorded them at connect time.
    package static func peerCredentials(_ fd: Int32) -> (pid: Int32, uid: UInt32, gid: UInt32)? {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard herald_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return (pid, uid, gid)
    }
}
