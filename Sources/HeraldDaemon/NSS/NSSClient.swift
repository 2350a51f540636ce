#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the NSS socket: it sends one request line and gets one reply line.
final class NSSClient: QueuedWriter {
    enum State {
        /// Waiting for the request line.
        case reading
        /// Waiting for a lookup to answer.
        case waiting(NSSLookupKey, NSSAddressFamilies)
        /// The reply is being written; the connection closes after it.
        case replying
    }

    let id: Int
    let fd: Int32
    let identity: ClientIdentity?
    let connectedAt: Int64
    /// What was fixed about the process that connected (nil: of no app).
    var connection: ConnectingProgram?
    /// True until the connecting process is identified: its request waits until then.
    var identifying = false
    /// The sender of the request line's bytes (every part of the line must come from the same one).
    private(set) var sender: UnixSocket.Sender?
    var reader = NSSLineReader()
    var state = State.reading
    /// When a waiting client's lookup gives up, unless an answer comes first.
    var deadline: Int64?
    var output: [UInt8] = []
    var waitingToWrite = false
    private var closed = false

    init(id: Int, fd: Int32, identity: ClientIdentity?, connectedAt: Int64) {
        self.id = id
        self.fd = fd
        self.identity = identity
        self.connectedAt = connectedAt
    }

    /// The user the connection counts against.
    var user: UInt32 { identity?.uid ?? UInt32.max }

    /// Takes the sender of bytes just read: the line's sender, unless another process wrote part of it, in which case
    /// the line has no single sender and is judged as nobody's.
    func take(_ new: UnixSocket.Sender?) {
        if let old = sender {
            if let pidfd = new?.pidfd { Glibc.close(pidfd) }
            if old.pid != new?.pid {
                if let pidfd = old.pidfd { Glibc.close(pidfd) }
                sender = nil
                mixedSenders = true
            }
            return
        }
        if mixedSenders {
            if let pidfd = new?.pidfd { Glibc.close(pidfd) }
            return
        }
        sender = new
    }
    private var mixedSenders = false

    func close() {
        guard !closed else { return }
        closed = true
        if let pidfd = sender?.pidfd { Glibc.close(pidfd) }
        if let pidfd = identity?.pidfd { Glibc.close(pidfd) }
        Glibc.close(fd)
    }
}
