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

    func close() {
        guard !closed else { return }
        closed = true
        if let pidfd = identity?.pidfd { Glibc.close(pidfd) }
        Glibc.close(fd)
    }
}
