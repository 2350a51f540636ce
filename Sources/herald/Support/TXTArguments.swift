import ArgumentParser
import HeraldWire

/// TXT entries given on the command line: `KEY=VALUE`, `KEY=` (an empty value) or `KEY` (a boolean
/// flag, RFC 6763 §6.4). Keys and values may hold any bytes through the escapes `\xHH` and `\\`, as `herald resolve`
/// shows them.
enum TXTArguments {
    /// The TXT rdata for the entries, in order; empty entries give the empty record (one zero byte).
    static func record(from arguments: [String]) throws(ValidationError) -> TXTRecord {
        var entries: [TXTEntry] = []
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = String(validating: try unescape(String(parts[0]), in: argument), as: UTF8.self) else {
                throw ValidationError("TXT entry '\(argument)' has a key that is not text; keys are printable ASCII (RFC 6763 §6.4)")
            }
            let value = parts.count == 2 ? try unescape(String(parts[1]), in: argument) : nil
            entries.append(TXTEntry(key: key, value: value))
        }
        let record: TXTRecord
        do {
            record = try TXTRecord(entries: entries)
        } catch {
            throw ValidationError("bad TXT entry: \(error). Give entries as KEY=VALUE, KEY= or KEY")
        }
        if record.rdata.count > Int(UInt16.max) {
            throw ValidationError("the TXT record would be \(record.rdata.count) bytes, more than the 65535 allowed; "
                                  + "give fewer or shorter entries (a few hundred bytes is the sensible limit)")
        }
        return record
    }

    /// The value's bytes: its UTF-8, with `\xHH` for any byte and `\\` for a backslash.
    static func unescape(_ text: String, in argument: String) throws(ValidationError) -> [UInt8] {
        var bytes: [UInt8] = []
        let input = Array(text.utf8)
        var index = 0
        while index < input.count {
            guard input[index] == UInt8(ascii: "\\") else {
                bytes.append(input[index])
                index += 1
                continue
            }
            if index + 1 < input.count, input[index + 1] == UInt8(ascii: "\\") {
                bytes.append(UInt8(ascii: "\\"))
                index += 2
            } else if index + 3 < input.count, input[index + 1] == UInt8(ascii: "x"),
                      let byte = UInt8(String(decoding: input[(index + 2)...(index + 3)], as: UTF8.self), radix: 16) {
                bytes.append(byte)
                index += 4
            } else {
                throw ValidationError("TXT entry '\(argument)' has a backslash that is not \\\\ or \\xHH (two hex digits)")
            }
        }
        return bytes
    }
}
