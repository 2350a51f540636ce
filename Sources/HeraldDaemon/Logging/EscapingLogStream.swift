import HeraldControl
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Where heraldd's log lines go (standard error: the journal under systemd), with every character a terminal or
/// the journal would act on shown as a visible escape (``OperatorText``). Log lines quote what clients and the
/// network said (executable paths, names, service types): an escape sequence or a newline in them must not draw a
/// forged line on the screen of an operator reading the log, or start a journal entry of its own.
///
/// A log handler writes one line per call, ending with its newline: everything before that newline is escaped.
package struct EscapingLogStream: TextOutputStream, Sendable {
    private let sink: @Sendable (String) -> Void

    /// A stream that hands each escaped line (newline included) to `sink`.
    package init(sink: @escaping @Sendable (String) -> Void) {
        self.sink = sink
    }

    /// Standard error, written at once (each line in one `write`, so that lines of several threads never mix).
    package static let standardError = EscapingLogStream { line in
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }

    package mutating func write(_ string: String) {
        guard let last = string.unicodeScalars.last else { return }
        if last == "\n" {
            sink(OperatorText.escaped(String(string.unicodeScalars.dropLast())) + "\n")
        } else {
            sink(OperatorText.escaped(string))
        }
    }

    /// A log handler in swift-log's usual format (time, level, label, metadata, message) writing to `stream`.
    package static func handler(label: String, stream: EscapingLogStream = .standardError) -> StreamLogHandler {
        StreamLogHandler(label: label, stream: stream)
    }
}
