/// Reads a capture file of DNS messages, each preceded by a 2-byte big-endian length (the format of the
/// test corpora and of `herald inspect`).
public enum CorpusReader {
    /// Why a corpus could not be split into messages.
    public struct FormatError: Error, CustomStringConvertible, Sendable {
        public let offset: Int
        public var description: String {
            "at byte \(offset): the length prefix promises more bytes than the file holds"
        }
    }

    /// Splits a file's bytes into messages.
    public static func messages(in data: [UInt8]) throws(FormatError) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var offset = 0
        while offset < data.count {
            guard offset + 2 <= data.count else { throw FormatError(offset: offset) }
            let length = Int(data[offset]) << 8 | Int(data[offset + 1])
            guard offset + 2 + length <= data.count else { throw FormatError(offset: offset) }
            messages.append(Array(data[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        return messages
    }
}
