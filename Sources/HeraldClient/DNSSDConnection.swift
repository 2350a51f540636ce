import HeraldIPC

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A synchronous connection to the daemon's app socket, speaking mDNSResponder's dnssd IPC protocol
/// (version 1).
///
/// The first request runs on the connection itself and gets its status in band. To run several
/// operations on one connection, start a `.connection` request first: every later request is then a
/// subordinate operation whose status comes back on a socket pair passed with `SCM_RIGHTS`, and whose
/// replies carry the client context it was started with. Closing the connection (or dropping the object)
/// ends every operation on it; the daemon withdraws registrations with goodbyes.
///
/// One owner at a time: the type is not `Sendable`, and a connection belongs to the thread that uses it.
public final class DNSSDConnection {
    /// The socket this connection was opened on.
    public let socketPath: String
    /// How long a request's status may take before `start` gives up.
    public var statusTimeout: Duration = .seconds(10)

    private var fd: Int32
    private var decoder = IPCFrameDecoder()
    private var received: [ReceivedReply] = []
    private var state = IPCConnectionState.new

    /// Connects to the app socket at `socketPath`.
    public init(socketPath: String) throws(DNSSDClientError) {
        self.socketPath = socketPath
        fd = try StreamSocket.connect(to: socketPath)
    }

    /// Connects to `explicitPath` when given, else to `DNSSD_UDS_PATH`, else to the default path.
    public convenience init(explicitPath: String?, environment: [String: String]) throws(DNSSDClientError) {
        try self.init(socketPath: SocketLocation.appSocketPath(explicit: explicitPath, environment: environment))
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// False until a first request has been sent; afterwards requests are subordinate operations.
    public var isEstablished: Bool { state == .established }

    /// True once `close()` has run.
    public var isClosed: Bool { fd < 0 }

    /// Sends a request and returns the status the daemon answers it with.
    ///
    /// On a new connection the request becomes the connection's own operation and its status is read in
    /// band; afterwards (see `startSharedConnection`) it is a subordinate operation and its status comes
    /// back on a passed socket. Replies to the request then arrive through `nextReply`, echoing `context`.
    /// A status other than `noError` means nothing was started. Get-property requests have their own
    /// raw answer: use `property(named:)`.
    @discardableResult
    public func start(_ request: Request, context: ClientContext = .zero) throws(DNSSDClientError) -> DNSServiceError {
        guard fd >= 0 else { throw .closed }
        let frame: IPCRequestFrame
        do {
            frame = try request.encodeFrame(context: context, connection: state)
        } catch {
            throw .unencodableRequest(error)
        }
        if frame.passesErrorSocket {
            return try sendPassingErrorSocket(frame.bytes)
        }
        try StreamSocket.writeAll(fd, frame.bytes[...])
        state = .established
        let word = try StreamSocket.readExactly(fd, count: StatusWord.length, timeout: statusTimeout)
        do {
            return try StatusWord.decode(word)
        } catch {
            throw .malformedReply(error)
        }
    }

    /// Starts several subordinate operations of a shared connection at once (see `startSharedConnection`): every
    /// request goes out before any status is read, so that the daemon takes them in one go rather than one round
    /// trip each. Returns the statuses in the order of `requests`; a status other than `noError` means that
    /// operation was not started. On a connection that is not shared yet, the requests are started one by one.
    public func startAll(_ requests: [(request: Request, context: ClientContext)]) throws(DNSSDClientError)
        -> [DNSServiceError]
    {
        guard fd >= 0 else { throw .closed }
        var frames: [IPCRequestFrame] = []
        for (request, context) in requests {
            do {
                frames.append(try request.encodeFrame(context: context, connection: state))
            } catch {
                throw .unencodableRequest(error)
            }
        }
        guard state == .established, frames.allSatisfy(\.passesErrorSocket) else {
            var statuses: [DNSServiceError] = []
            for (request, context) in requests { statuses.append(try start(request, context: context)) }
            return statuses
        }
        var statusSockets: [Int32] = []
        defer { for socket in statusSockets { Glibc.close(socket) } }
        for frame in frames { statusSockets.append(try sendPassingStatusSocket(frame.bytes)) }
        var statuses: [DNSServiceError] = []
        for socket in statusSockets {
            let word = try StreamSocket.readExactly(socket, count: StatusWord.length, timeout: statusTimeout)
            do {
                statuses.append(try StatusWord.decode(word))
            } catch {
                throw .malformedReply(error)
            }
        }
        return statuses
    }

    /// True when replies already read from the socket wait to be taken (`nextReceivedReply` returns one at once).
    public var hasBufferedReplies: Bool { !received.isEmpty }

    /// Makes this a shared connection (`DNSServiceCreateConnection`): every later `start` is a subordinate
    /// operation with its own context. Returns the daemon's status.
    @discardableResult
    public func startSharedConnection() throws(DNSSDClientError) -> DNSServiceError {
        try start(.connection(ConnectionRequest()))
    }

    /// Stops the subordinate operation started with `context` (`DNSServiceRefDeallocate` of a shared
    /// reference). The daemon sends no status for a cancel. The connection's own first operation ends only
    /// with `close()`.
    public func cancel(_ context: ClientContext) throws(DNSSDClientError) {
        guard fd >= 0 else { throw .closed }
        let frame: IPCRequestFrame
        do {
            frame = try CancelRequest().encodeFrame(context: context, connection: .established)
        } catch {
            throw .unencodableRequest(error)
        }
        try StreamSocket.writeAll(fd, frame.bytes[...])
    }

    /// Asks for a daemon property (`DNSServiceGetProperty`, such as `DaemonVersion`). Only valid as the
    /// first request of a connection, like the C library, which opens a connection for it.
    public func property(named name: String) throws(DNSSDClientError) -> GetPropertyReply {
        guard fd >= 0 else { throw .closed }
        guard state == .new else { throw .unencodableRequest(.requiresEstablishedConnection(.getProperty)) }
        let frame: IPCRequestFrame
        do {
            frame = try GetPropertyRequest(name: name).encodeFrame()
        } catch {
            throw .unencodableRequest(error)
        }
        try StreamSocket.writeAll(fd, frame.bytes[...])
        state = .established
        // Raw answer: status; then, when it is NoError, the value's length and the value.
        var bytes = try StreamSocket.readExactly(fd, count: StatusWord.length, timeout: statusTimeout)
        if GetPropertyReply.totalLength(ofPrefix: bytes) != StatusWord.length {
            bytes += try StreamSocket.readExactly(fd, count: 4, timeout: statusTimeout)
            let total = GetPropertyReply.totalLength(ofPrefix: bytes) ?? bytes.count
            guard total - bytes.count <= 65_536 else {
                throw .malformedReply(
                    .valueTooLong(field: .propertyValue, offset: 4, length: total - 8, maximum: 65_536))
            }
            if total > bytes.count {
                bytes += try StreamSocket.readExactly(fd, count: total - bytes.count, timeout: statusTimeout)
            }
        }
        do {
            return try GetPropertyReply.decode(bytes)
        } catch {
            throw .malformedReply(error)
        }
    }

    /// The next reply on the connection, or nil when `timeout` passes first (nil: wait as long as it takes)
    /// or a signal interrupts the wait — so that a caller can check for Ctrl-C between replies.
    public func nextReply(timeout: Duration?) throws(DNSSDClientError) -> Reply? {
        try nextReceivedReply(timeout: timeout)?.reply
    }

    /// Like `nextReply`, with the client context that says which operation the reply belongs to.
    public func nextReceivedReply(timeout: Duration?) throws(DNSSDClientError) -> ReceivedReply? {
        try nextReceivedReply(timeout: timeout, stoppingWhenReadable: nil)
    }

    /// Like `nextReceivedReply(timeout:)`, and also returns nil as soon as `stopDescriptor` becomes readable:
    /// another thread writes to that descriptor (an eventfd or a pipe) to end a wait that has no timeout.
    public func nextReceivedReply(timeout: Duration?, stoppingWhenReadable stopDescriptor: Int32?)
        throws(DNSSDClientError) -> ReceivedReply?
    {
        guard fd >= 0 else { throw .closed }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while received.isEmpty {
            var wait: Int32 = -1
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero {
                    // One last look without waiting: data may already be there.
                    wait = 0
                } else {
                    wait = StreamSocket.milliseconds(remaining)
                }
            }
            let readiness =
                if let stopDescriptor {
                    try StreamSocket.waitForInput(fd, alsoWatching: stopDescriptor, milliseconds: wait)
                } else {
                    try StreamSocket.waitForInput(fd, milliseconds: wait)
                }
            switch readiness {
            case .interrupted, .timedOut, .woken:
                return nil
            case .readable:
                try readAvailable()
            }
            if let deadline, ContinuousClock.now >= deadline, received.isEmpty { return nil }
        }
        return received.removeFirst()
    }

    /// Closes the connection, ending every operation on it. Safe to call twice.
    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    // MARK: - Internals

    private func readAvailable() throws(DNSSDClientError) {
        let bytes = try StreamSocket.read(fd, maximum: 65_536)
        if bytes.isEmpty { throw .disconnected }
        let frames: [IPCFrame]
        do {
            frames = try decoder.feed(bytes)
        } catch {
            throw .malformedReply(error)
        }
        for frame in frames {
            do {
                received.append(
                    ReceivedReply(
                        context: frame.header.context,
                        reply: try Reply.decode(header: frame.header, body: frame.body)))
            } catch {
                throw .malformedReply(error)
            }
        }
    }

    /// Sends a subordinate request as `sendPassingErrorSocket` does, without waiting: returns the end of the socket
    /// pair on which its status will come (the caller closes it).
    private func sendPassingStatusSocket(_ bytes: [UInt8]) throws(DNSSDClientError) -> Int32 {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .systemCall("socketpair", errno: errno)
        }
        do {
            try StreamSocket.writeAll(fd, bytes.dropLast())
            try StreamSocket.send(fd, [bytes[bytes.count - 1]], passing: pair[1])
        } catch {
            Glibc.close(pair[0])
            Glibc.close(pair[1])
            throw error
        }
        Glibc.close(pair[1])
        return pair[0]
    }

    /// Sends a subordinate request: every byte but the last plainly, the last with one end of a fresh
    /// socket pair attached; the daemon writes the 4-byte status on that socket and closes it.
    private func sendPassingErrorSocket(_ bytes: [UInt8]) throws(DNSSDClientError) -> DNSServiceError {
        let statusSocket = try sendPassingStatusSocket(bytes)
        defer { Glibc.close(statusSocket) }
        let word = try StreamSocket.readExactly(statusSocket, count: StatusWord.length, timeout: statusTimeout)
        do {
            return try StatusWord.decode(word)
        } catch {
            throw .malformedReply(error)
        }
    }
}
