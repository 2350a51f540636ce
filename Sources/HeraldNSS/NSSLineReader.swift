/// Collects the bytes of one connection until its request line is complete, never holding more than one
/// line's worth.
package struct NSSLineReader: Sendable {
    /// The most bytes kept while waiting for a newline.
    package let limit: Int
    private var buffer: [UInt8] = []

    package enum Outcome: Hashable, Sendable {
        /// No newline yet.
        case incomplete
        /// A complete line, without its newline; bytes after it are ignored (one request per connection).
        case line([UInt8])
        /// More than `limit` bytes without a newline.
        case tooLong
    }

    package init(limit: Int = NSSRequest.maximumLineLength + 2) {
        self.limit = limit
    }

    /// Adds bytes read from the socket.
    package mutating func feed(_ bytes: some Collection<UInt8>) -> Outcome {
        if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            let head = bytes[..<newline]
            guard buffer.count + head.count <= limit else { return .tooLong }
            let line = buffer + head
            buffer = []
            return .line(line)
        }
        guard buffer.count + bytes.count <= limit else { return .tooLong }
        buffer.append(contentsOf: bytes)
        return .incomplete
    }

    /// The line when the peer closed its end after sending a request without a newline.
    package mutating func finish() -> [UInt8]? {
        guard !buffer.isEmpty else { return nil }
        defer { buffer = [] }
        return buffer
    }
}
