#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The few Unix stream-socket calls the client needs, each retrying on `EINTR` where that is safe and
/// reporting failures as `DNSSDClientError`.
enum StreamSocket {
    /// Connects a blocking stream socket to `path`. Missing or refusing sockets are "daemon not running".
    static func connect(to path: String) throws(DNSSDClientError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else { throw .connectionFailed(path: path, errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .systemCall("socket(AF_UNIX)", errno: errno) }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT, ECONNREFUSED: throw .daemonNotRunning(path: path, errno: code)
            case EACCES, EPERM: throw .permissionDenied(path: path, errno: code)
            default: throw .connectionFailed(path: path, errno: code)
            }
        }
        return fd
    }

    /// Writes every byte (blocking), without raising SIGPIPE when the daemon has gone.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(DNSSDClientError) {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw .disconnected }
                throw .systemCall("send", errno: errno)
            }
            offset += written
        }
    }

    /// Sends `bytes` with `descriptor` attached as `SCM_RIGHTS` ancillary data.
    ///
    /// The control message is laid out by hand (glibc's `CMSG_*` macros do not reach Swift): on Linux a
    /// `struct cmsghdr` is `size_t len; int level; int type;`, followed by the data, padded to `size_t`.
    static func send(_ fd: Int32, _ bytes: [UInt8], passing descriptor: Int32) throws(DNSSDClientError) {
        let word = MemoryLayout<Int>.size
        let headerSize = word + 8
        let length = headerSize + MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: (length + word - 1) & ~(word - 1))
        func put(_ value: Int, at offset: Int, size: Int) {
            for index in 0..<size { control[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        put(length, at: 0, size: word)
        put(Int(SOL_SOCKET), at: word, size: 4)
        put(Int(SCM_RIGHTS), at: word + 4, size: 4)
        put(Int(descriptor), at: headerSize, size: 4)
        var sent: Int
        repeat {
            sent = bytes.withUnsafeBytes { data in
                control.withUnsafeMutableBytes { controlBytes -> Int in
                    var vector = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress), iov_len: data.count)
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
        } while sent < 0 && errno == EINTR
        if sent < 0 {
            if errno == EPIPE || errno == ECONNRESET { throw .disconnected }
            throw .systemCall("sendmsg", errno: errno)
        }
        guard sent == bytes.count else { throw .systemCall("sendmsg (short write)", errno: EIO) }
    }

    /// What waiting for input ended with.
    enum Readiness {
        case readable
        case timedOut
        /// A signal arrived while waiting (the caller decides whether to go on).
        case interrupted
        /// The extra descriptor passed to `waitForInput(_:alsoWatching:milliseconds:)` became readable.
        case woken
    }

    /// Like `waitForInput(_:milliseconds:)`, and also returns `.woken` as soon as `other` is readable (a
    /// descriptor another thread writes to in order to stop the wait).
    static func waitForInput(_ fd: Int32, alsoWatching other: Int32, milliseconds: Int32) throws(DNSSDClientError)
        -> Readiness
    {
        var entries = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: other, events: Int16(POLLIN), revents: 0),
        ]
        let result = poll(&entries, 2, milliseconds)
        if result < 0 {
            if errno == EINTR { return .interrupted }
            throw .systemCall("poll", errno: errno)
        }
        if result == 0 { return .timedOut }
        if entries[1].revents != 0 { return .woken }
        return .readable
    }

    /// Waits until `fd` has input (or end of file) for at most `milliseconds` (-1: no limit).
    static func waitForInput(_ fd: Int32, milliseconds: Int32) throws(DNSSDClientError) -> Readiness {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, milliseconds)
        if result < 0 {
            if errno == EINTR { return .interrupted }
            throw .systemCall("poll", errno: errno)
        }
        return result == 0 ? .timedOut : .readable
    }

    /// Reads what is available (at most `maximum` bytes); an empty result means end of file.
    static func read(_ fd: Int32, maximum: Int) throws(DNSSDClientError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return Array(buffer[0..<count]) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return [] }
            throw .systemCall("recv", errno: errno)
        }
    }

    /// Reads exactly `count` bytes, giving up after `timeout`.
    static func readExactly(_ fd: Int32, count: Int, timeout: Duration) throws(DNSSDClientError) -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        while bytes.count < count {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                throw .statusTimedOut(
                    seconds: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
            }
            switch try waitForInput(fd, milliseconds: Self.milliseconds(remaining)) {
            case .timedOut, .interrupted, .woken: continue
            case .readable:
                let chunk = try read(fd, maximum: count - bytes.count)
                if chunk.isEmpty { throw .disconnected }
                bytes += chunk
            }
        }
        return bytes
    }

    /// A duration as poll(2) milliseconds, rounded up, capped at `Int32.max`.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 { return 0 }
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}
