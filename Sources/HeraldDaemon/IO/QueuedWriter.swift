/// A connection whose replies are queued and written as fast as its peer reads them.
protocol QueuedWriter: AnyObject {
    var fd: Int32 { get }
    /// Bytes not yet taken by the socket.
    var output: [UInt8] { get set }
    /// True while the loop watches the socket for writability.
    var waitingToWrite: Bool { get set }
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
