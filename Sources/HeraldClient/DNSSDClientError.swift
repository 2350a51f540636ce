import HeraldIPC

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why talking to the daemon's app socket failed. Each case says which side is at fault, so that a tool
/// can tell "start the daemon" from "fix the request".
public enum DNSSDClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens at the socket path: the file is missing (`ENOENT`) or nobody accepts on it
    /// (`ECONNREFUSED`, a socket left by a daemon that stopped).
    case daemonNotRunning(path: String, errno: Int32)
    /// The socket exists but this user may not connect to it (`EACCES`, `EPERM`).
    case permissionDenied(path: String, errno: Int32)
    /// Connecting failed for another reason (a path that is not a socket, too long, …).
    case connectionFailed(path: String, errno: Int32)
    /// The daemon closed the connection (it stopped, restarted, or dropped this client).
    case disconnected
    /// A system call on an open connection failed.
    case systemCall(String, errno: Int32)
    /// The daemon did not send a request's status in time.
    case statusTimedOut(seconds: Double)
    /// The daemon sent bytes that are not a valid reply.
    case malformedReply(IPCDecodeError)
    /// The request cannot be put on the wire (a string with a NUL, a TXT record over 65,535 bytes, …).
    case unencodableRequest(IPCEncodeError)
    /// The connection was already closed by this client.
    case closed

    /// True for the cases that mean "no daemon answers at this path".
    public var isDaemonNotRunning: Bool {
        if case .daemonNotRunning = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .daemonNotRunning(let path, let code):
            return "the daemon is not running (nothing listens on \(path): \(Self.text(code)))"
        case .permissionDenied(let path, let code):
            return "cannot connect to \(path): \(Self.text(code))"
        case .connectionFailed(let path, let code):
            return "cannot connect to \(path): \(Self.text(code))"
        case .disconnected:
            return "the daemon closed the connection"
        case .systemCall(let call, let code):
            return "\(call) failed: \(Self.text(code))"
        case .statusTimedOut(let seconds):
            return "the daemon did not answer the request within \(seconds) s"
        case .malformedReply(let error):
            return "the daemon sent a malformed reply: \(error)"
        case .unencodableRequest(let error):
            return "the request cannot be encoded: \(error)"
        case .closed:
            return "the connection is closed"
        }
    }

    /// `strerror` text for an errno value.
    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
