import HeraldWire

/// Simultaneous probe tie-breaking (RFC 6762 §8.2): the records each host proposes for a name are sorted
/// and compared pairwise by class, then type, then the raw bytes of their data (names uncompressed); the
/// first difference decides, and a list that runs out first loses.
enum ProbeTieBreak {
    enum Outcome: Equatable {
        /// Our data is lexicographically later: we keep the name.
        case weWin
        /// Theirs is later: wait one second, then probe again.
        case weLose
        /// The same records: not a conflict (our own probe looped back, or a host with identical data).
        case identical
    }

    static func compare(ours: [ResourceRecord], theirs: [ResourceRecord]) -> Outcome {
        let mine = ours.map(sortKey).sorted(by: precedes)
        let others = theirs.map(sortKey).sorted(by: precedes)
        for (a, b) in zip(mine, others) where a != b {
            return precedes(a, b) ? .weLose : .weWin
        }
        if mine.count == others.count { return .identical }
        return mine.count > others.count ? .weWin : .weLose
    }

    private struct Key: Equatable {
        var recordClass: UInt16
        var type: UInt16
        var data: [UInt8]
    }

    private static func sortKey(_ record: ResourceRecord) -> Key {
        Key(recordClass: record.recordClass.rawValue, type: record.type.rawValue, data: uncompressedData(record.data))
    }

    private static func precedes(_ a: Key, _ b: Key) -> Bool {
        if a.recordClass != b.recordClass { return a.recordClass < b.recordClass }
        if a.type != b.type { return a.type < b.type }
        return a.data.lexicographicallyPrecedes(b.data)
    }

    /// Record data as bytes with names written out in full (no compression), as the comparison requires.
    static func uncompressedData(_ data: RecordData) -> [UInt8] {
        func name(_ name: DNSName) -> [UInt8] { name.wire + [0] }
        func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        switch data {
        case .a(let address): return address.bytes
        case .aaaa(let address): return address.bytes
        case .ptr(let target), .cname(let target): return name(target)
        case .srv(let srv): return u16(srv.priority) + u16(srv.weight) + u16(srv.port) + name(srv.target)
        case .txt(let txt): return txt.rdata
        case .hinfo(let cpu, let os): return [UInt8(min(cpu.count, 255))] + cpu + [UInt8(min(os.count, 255))] + os
        case .nsec(let next, let types): return name(next) + types.encoded
        case .opt(let bytes), .opaque(let bytes): return bytes
        }
    }
}
