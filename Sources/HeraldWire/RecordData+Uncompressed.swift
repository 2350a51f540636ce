extension RecordData {
    /// The record data in wire form with every name written out in full: what the dnssd API hands to
    /// clients, and what RFC 6762 §8.2 compares in probe tie-breaks.
    public var uncompressedBytes: [UInt8] {
        func name(_ name: DNSName) -> [UInt8] { name.wire + [0] }
        func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        switch self {
        case .a(let address): return address.bytes
        case .aaaa(let address): return address.bytes
        case .ptr(let target), .cname(let target): return name(target)
        case .srv(let srv): return u16(srv.priority) + u16(srv.weight) + u16(srv.port) + name(srv.target)
        case .txt(let txt): return txt.rdata
        case .hinfo(let cpu, let os):
            return [UInt8(min(cpu.count, 255))] + cpu.prefix(255) + [UInt8(min(os.count, 255))] + os.prefix(255)
        case .nsec(let next, let types): return name(next) + types.encoded
        case .opt(let bytes), .opaque(let bytes): return bytes
        }
    }
}

extension RecordData {
    /// Reads record data given as the uncompressed bytes of a record of `type` (as the dnssd API passes them
    /// to `DNSServiceRegisterRecord` and `DNSServiceAddRecord`), with the same rules as data in a message:
    /// the known types decoded and checked, every other type kept as opaque bytes.
    public static func decode(type: RecordType, uncompressed bytes: [UInt8]) throws(DNSWireError) -> RecordData {
        guard bytes.count <= Int(UInt16.max) - 64 else {
            throw DNSWireError(
                offset: 0, rule: .rdataTruncated(type: type, declared: bytes.count, available: Int(UInt16.max) - 64))
        }
        // One answer at the root name: header, name, type, class, TTL, length, data.
        var message: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
        message += [UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xFF), 0, 1, 0, 0, 0, 0]
        message += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        let parsed = try DNSMessage(parsing: message)
        // The parser checked the one answer the header declares.
        return parsed.answers[0].data
    }
}
