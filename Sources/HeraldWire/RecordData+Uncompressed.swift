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
