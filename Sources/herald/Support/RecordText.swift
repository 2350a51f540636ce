import HeraldWire

/// Record data from the daemon (uncompressed rdata) in presentation form, as `dig` shows it.
enum RecordText {
    /// `0 0 631 printer.local.` for SRV, `"txtvers=1"` for TXT …; the RFC 3597 form `\# 3 abcdef` for
    /// types Herald does not decode or data that does not parse.
    static func presentation(type: UInt16, recordClass: UInt16, rdata: [UInt8]) -> String {
        // Wrap the record in a one-answer response and let the wire parser decode it.
        var message: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        message.append(0)  // owner: the root
        message += [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(recordClass >> 8), UInt8(recordClass & 0xFF)]
        message += [0, 0, 0, 0]
        message += [UInt8(rdata.count >> 8), UInt8(rdata.count & 0xFF)]
        message += rdata
        if rdata.count <= 0xFFFF, let parsed = try? DNSMessage(parsing: message), let record = parsed.answers.first {
            if case .opaque = record.data {} else { return record.data.description }
        }
        return "\\# \(rdata.count)" + (rdata.isEmpty ? "" : " " + TXTText.hex(rdata))
    }

    /// `A`, `SRV`, `TYPE65`.
    static func typeName(_ type: UInt16) -> String { RecordType(type).description }

    /// `IN`, `CLASS3`.
    static func className(_ recordClass: UInt16) -> String { RecordClass(recordClass).description }
}
