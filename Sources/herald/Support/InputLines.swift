#if canImport(Glibc)
    import Glibc
#endif

/// Lines of standard input, read with read(2) into a buffer of its own, so that a command busy waiting for
/// something else (`herald prompt` waiting for requests) notices when its input ends (a pipe closed, /dev/null)
/// without taking a line before it asks for one.
final class InputLines {
    private var buffer: [UInt8] = []
    private var ended = false

    /// True when the input has ended and no line is left; takes in what is waiting, without blocking.
    var hasEnded: Bool {
        fill(blocking: false)
        return ended && buffer.isEmpty
    }

    /// The next line without its newline, waiting for it; nil at the end of input or on Ctrl-C.
    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if ended {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            fill(blocking: true)
            if Interruption.signal != nil { return nil }
        }
    }

    private func fill(blocking: Bool) {
        guard !ended else { return }
        if !blocking {
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { return }
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(STDIN_FILENO, &chunk, chunk.count)
        if count > 0 {
            buffer += chunk[..<count]
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
            ended = true
        }
    }
}
