import HeraldControl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A blocking connection to heraldd's control socket (operators only): send a ``ControlRequest``, read its
/// ``ControlReply``; after `subscribe`, read event lines as they come.
public final class ControlConnection {
    /// The environment variable that names the control socket.
    public static let environmentVariable = "HERALD_CONTROL_SOCKET"
    /// Where a system installation puts it.
    public static let defaultPath = "/run/herald/control.sock"

    public let path: String
    private var fd: Int32
    private var lines = ControlLineBuffer()
    private var queued: [ControlReply] = []
    private var nextID = 1

    /// The socket path: the explicit one, else `HERALD_CONTROL_SOCKET`, else the default.
    public static func path(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment[environmentVariable], !path.isEmpty { return path }
        return defaultPath
    }

    public init(path: String) throws(DNSSDClientError) {
        self.path = path
        fd = try StreamSocket.connect(to: path)
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends a request (its id is chosen here) and waits for its reply; events that arrive first are kept for
    /// ``nextEvent(timeout:)``.
    public func call(_ request: ControlRequest, timeout: Duration = .seconds(30)) throws(DNSSDClientError)
        -> ControlReply
    {
        var request = request
        request.id = nextID
        nextID += 1
        let bytes: [UInt8]
        do {
            bytes = try ControlProtocol.line(request)
        } catch {
            throw .systemCall("encoding a control request", errno: EINVAL)
        }
        guard fd >= 0 else { throw .closed }
        try StreamSocket.writeAll(fd, bytes[...])
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, let reply = try readLine(timeout: remaining) else {
                throw .statusTimedOut(seconds: Double(timeout.components.seconds))
            }
            if reply.id == request.id { return reply }
            if reply.event != nil { queued.append(reply) }
        }
    }

    /// The next event line, or nil when `timeout` passes first. With no timeout it returns nil after a short
    /// slice without events, so that the caller can check for Ctrl-C and call again.
    public func nextEvent(timeout: Duration?) throws(DNSSDClientError) -> ControlReply? {
        if !queued.isEmpty { return queued.removeFirst() }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let remaining = deadline.map { ContinuousClock.now.duration(to: $0) }
            if let remaining, remaining <= .zero { return nil }
            guard let reply = try readLine(timeout: remaining) else { return nil }
            if reply.event != nil { return reply }
        }
    }

    /// Reads until one full line is decoded; nil when `timeout` passes.
    private func readLine(timeout: Duration?) throws(DNSSDClientError) -> ControlReply? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            guard fd >= 0 else { throw .closed }
            if let line = pendingLines.first {
                pendingLines.removeFirst()
                do {
                    return try ControlProtocol.decode(ControlReply.self, from: line)
                } catch {
                    throw .systemCall("reading a control reply (not valid JSON)", errno: EPROTO)
                }
            }
            var wait: Int32 = -1
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { return nil }
                wait = StreamSocket.milliseconds(remaining)
            }
            // Short slices, so a signal handled on another thread is noticed by the caller's loop.
            let slice = wait < 0 ? 250 : min(wait, 250)
            switch try StreamSocket.waitForInput(fd, milliseconds: slice) {
            case .timedOut, .interrupted, .woken:
                if deadline == nil { return nil }
                continue
            case .readable:
                let bytes = try StreamSocket.read(fd, maximum: 65_536)
                if bytes.isEmpty { throw .disconnected }
                do {
                    pendingLines += try lines.feed(bytes)
                } catch {
                    throw .systemCall("reading a control reply (\(error))", errno: EMSGSIZE)
                }
            }
        }
    }

    private var pendingLines: [[UInt8]] = []
}
