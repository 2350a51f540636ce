import HeraldControl

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the control socket: its line buffer, its queued output, and what it subscribed to.
final class ControlClient: QueuedWriter {
    let id: Int
    let fd: Int32
    let identity: ClientIdentity?
    var lines = ControlLineBuffer()
    var output: [UInt8] = []
    var waitingToWrite = false
    var closed = false
    /// Topics of `subscribe`: `requests`, `decisions`, `log`.
    var topics: Set<String> = []
    /// The last audit sequence number sent to a `log` subscriber.
    var lastLogSequence: Int64 = 0
    /// The sender of the bytes read last, to whom the lines they complete belong; nil when a line in progress has
    /// bytes of two senders (it is then nobody's, and no operator's).
    private(set) var sender: UnixSocket.Sender?
    /// True when lines were held back from a `log` subscriber until it reads what it has.
    var logHeldBack = false

    init(id: Int, fd: Int32, identity: ClientIdentity?) {
        self.id = id
        self.fd = fd
        self.identity = identity
    }

    /// Takes the sender of bytes just read. A line begun by one process and ended by another belongs to neither.
    func take(_ new: UnixSocket.Sender?) {
        let mixed = !lines.isEmpty && sender?.pid != new?.pid
        if let pidfd = sender?.pidfd { Glibc.close(pidfd) }
        sender = mixed ? nil : new
        if mixed, let pidfd = new?.pidfd { Glibc.close(pidfd) }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let pidfd = sender?.pidfd { Glibc.close(pidfd) }
        if let pidfd = identity?.pidfd { Glibc.close(pidfd) }
        Glibc.close(fd)
    }
}
