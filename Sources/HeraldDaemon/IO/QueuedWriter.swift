import Logging

/// A connection whose replies are queued and written as fast as its peer reads them.
protocol QueuedWriter: AnyObject {
    var fd: Int32 { get }
    /// Bytes not yet taken by the socket.
    var output: [UInt8] { get set }
    /// True while the loop watches the socket for writability.
    var waitingToWrite: Bool { get set }
    /// Closes the socket.
    func close()
}

/// What writing a connection's queue came to.
enum QueuedWriteResult {
    /// Everything queued was written.
    case drained
    /// The socket is full; the loop now watches for writability and the rest goes when it can.
    case pending
    /// The peer has gone.
    case failed
}

extension EventLoop {
    /// Starts watching a newly accepted connection: `read` runs when it is readable, `write` when it can take more
    /// of its queue. A connection the loop cannot watch is closed, with a warning naming `server`; returns whether
    /// it is watched.
    func watch<Connection: QueuedWriter>(
        _ connection: Connection, server: String, logger: Logger,
        read: @escaping (Connection) -> Void,
        write: @escaping (Connection) -> Void
    ) -> Bool {
        do {
            try register(connection.fd, for: .readable) { events in
                if events.contains(.writable) { write(connection) }
                if events.contains(.readable) { read(connection) }
            }
            return true
        } catch {
            logger.warning("\(server): cannot watch a new client: \(error)")
            connection.close()
            return false
        }
    }

    /// Writes as much of `connection`'s queue as the socket takes, and watches the socket for writability exactly
    /// while bytes remain.
    func writeQueued(_ connection: some QueuedWriter) -> QueuedWriteResult {
        while !connection.output.isEmpty {
            guard let written = UnixSocket.write(connection.fd, connection.output[...]) else { return .failed }
            if written == 0 { break }
            connection.output.removeFirst(written)
        }
        let wantsWrite = !connection.output.isEmpty
        if wantsWrite != connection.waitingToWrite {
            connection.waitingToWrite = wantsWrite
            modify(connection.fd, for: wantsWrite ? [.readable, .writable] : .readable)
        }
        return wantsWrite ? .pending : .drained
    }
}
