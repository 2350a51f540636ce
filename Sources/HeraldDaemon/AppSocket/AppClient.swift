import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldSession
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the app socket, as the socket sees it: its descriptor, its frame decoder, the descriptors it
/// passed, its outgoing bytes and who is on the other end. Its operations are its session's, in the
/// ``SessionCore``.
final class AppClient: QueuedWriter {
    let id: Int
    /// The connection as the session core knows it.
    var connectionID: ConnectionID { ConnectionID(id) }
    let fd: Int32
    let identity: ClientIdentity?
    /// What was fixed about the process that connected (nil: of no app); set once, as the connection is accepted.
    var connection: ConnectingProgram?
    /// The sender of the bytes read last (the kernel does not merge two senders' bytes into one read), to whom the
    /// frames they complete belong.
    var sender: UnixSocket.Sender?
    /// Set once the connecting process has exited or started another program: the connection's operations have
    /// ended and it serves as no app from then on.
    var programEnded: String?
    /// True once the log has said why this connection's requests are judged as no app.
    var notedCaller = false
    /// The caller of the frames read from one sender in one turn of the loop, established once for all of them
    /// (a frame takes a read or two, and a client sends its requests in batches): the process behind the sender
    /// is looked at once per turn, not per request. Cleared when bytes of another sender come and when the turn's
    /// reading ends, so a later judgement looks again.
    var callerOfRead: (caller: CallerIdentity, note: String?)?
    /// True while the frames of one read are handled.
    var handlingRead = false
    /// When the connection last had a request or an operation (monotonic milliseconds), for the idle timeout.
    var lastActive: Int64
    var decoder = IPCFrameDecoder()
    var connectionState = IPCConnectionState.new
    /// Error-return sockets passed with SCM_RIGHTS, waiting for the frame they belong to.
    var passedDescriptors: [Int32] = []
    /// Bytes not yet taken by the socket.
    var output: [UInt8] = []
    var waitingToWrite = false
    var closed = false

    init(id: Int, fd: Int32, identity: ClientIdentity?, now: Int64) {
        self.id = id
        self.fd = fd
        self.identity = identity
        lastActive = now
    }

    /// The user the connection counts against for the per-user shares (the connecting process's).
    var user: UInt32 { identity?.uid ?? UInt32.max }

    /// Error-return sockets one connection may have waiting: a request passes one, with its last byte.
    static let maximumPassedDescriptors = 4

    /// Keeps descriptors passed with a read for the frame they came with; past `maximumPassedDescriptors` waiting,
    /// the rest are closed at once (a client passing more than its requests use must not fill the daemon's table).
    func holdPassed(_ descriptors: [Int32]) {
        for descriptor in descriptors {
            if passedDescriptors.count < Self.maximumPassedDescriptors {
                passedDescriptors.append(descriptor)
            } else {
                Glibc.close(descriptor)
            }
        }
    }

    /// Closes the passed descriptors no request took.
    func closePassedDescriptors() {
        for descriptor in passedDescriptors { Glibc.close(descriptor) }
        passedDescriptors.removeAll()
    }

    /// Closes the socket and any descriptors still held.
    func close() {
        guard !closed else { return }
        closed = true
        closePassedDescriptors()
        if let pidfd = sender?.pidfd { Glibc.close(pidfd) }
        sender = nil
        if let pidfd = identity?.pidfd { Glibc.close(pidfd) }
        Glibc.close(fd)
    }
}
