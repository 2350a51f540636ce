import ArgumentParser
import HeraldWire

/// TXT entries given on the command line: `KEY=VALUE`, `KEY=` (an empty value) or `KEY` (a boolean
/// flag, RFC 6763 §6.4). Keys and values may hold any bytes through the escapes `\xHH` and `\\`, as `herald resolve`
/// shows them.
///
/// As `dns-sd -R` and `avahi-publish` do, entries are published as given: a key RFC 6763 §6.4 would not allow (not
/// printable ASCII, empty) or a key given twice is a warning, not an error (clients ignore a string that starts with
/// `=`, and read only the first of a key).
enum TXTArguments {
    /// The TXT rdata for the entries, in order; empty entries give the empty record (one zero byte). `warn` hears
    /// of entries that break RFC 6763 §6.4.
    static func record(
        from arguments: [String],
        warn: (String) -> Void = { printError("herald: warning: \($0)") }
    ) throws(ValidationError) -> TXTRecord {
        var strings: [[UInt8]] = []
        var seen = Set<[UInt8]>()
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try unescape(String(parts[0]), in: argument)
            var string = key
            if parts.count == 2 {
                string.append(UInt8(ascii: "="))
                string += try unescape(String(parts[1]), in: argument)
            }
            if key.isEmpty {
                warn("TXT entry '\(argument)' has an empty key; clients ignore it (RFC 6763 §6.4)")
            } else if key.contains(where: { $0 < 0x20 || $0 > 0x7E }) {
                warn(
                    "TXT entry '\(argument)' has a key that is not printable ASCII, as RFC 6763 §6.4 asks; published as given"
                )
            }
            if !key.isEmpty, !seen.insert(key.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }).inserted {
                warn(
                    "TXT key '\(String(decoding: key, as: UTF8.self))' is given more than once; clients read only the first (RFC 6763 §6.4)"
                )
            }
            strings.append(string)
        }
        let record: TXTRecord
        do {
            record = try TXTRecord(strings: strings)
        } catch {
            throw ValidationError("bad TXT entry: \(error). Give entries as KEY=VALUE, KEY= or KEY")
        }
        if record.rdata.count > Int(UInt16.max) {
            throw ValidationError(
                "the TXT record would be \(record.rdata.count) bytes, more than the 65535 allowed; "
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
                let byte = UInt8(String(decoding: input[(index + 2)...(index + 3)], as: UTF8.self), radix: 16)
            {
                bytes.append(byte)
                index += 4
            } else {
                throw ValidationError(
                    "TXT entry '\(argument)' has a backslash that is not \\\\ or \\xHH (two hex digits)")
            }
        }
        return bytes
    }
}
