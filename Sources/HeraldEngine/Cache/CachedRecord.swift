import HeraldWire

/// One cached record and what the querier needs to know about it.
///
/// The small fields come right after the record so that they fill its padding: the cache holds many of these.
package struct CachedRecord: Sendable {
    /// The record as received (its TTL is the one it arrived with).
    package var record: ResourceRecord
    /// True for this host's own published records, which never expire from the cache on their own.
    package var isLocal: Bool
    /// This record's share of the refresh jitter, in hundredths of a percent of the TTL (0–200).
    var refreshJitter: UInt8
    /// ``refreshesSent`` in the low bits and ``isWanted`` in the top one: one byte for both keeps a cache slot at its
    /// size.
    private var refreshState: UInt8 = 0
    /// How many of the refresh queries at 80/85/90/95 % of the TTL have been sent (RFC 6762 §5.2).
    var refreshesSent: UInt8 {
        get { refreshState & 0x7F }
        set { refreshState = refreshState & 0x80 | newValue & 0x7F }
    }
    /// True while an operation asks for the record's set (a question for it, or an NSEC record whose negative answer
    /// a query reports): such a record goes last when the cache is full. Kept up to date by the engine
    /// (``RecordCache/updateWanted(answering:isWanted:)``).
    var isWanted: Bool {
        get { refreshState & 0x80 != 0 }
        set { refreshState = newValue ? refreshState | 0x80 : refreshState & 0x7F }
    }
    /// A hash of the record's data, so that finding a record among the others of its name compares integers first.
    var dataHash: UInt32
    package var receivedAt: Instant
    /// When the record leaves the cache unless refreshed.
    package var expiresAt: Instant

    init(
        record: ResourceRecord, dataHash: UInt32, receivedAt: Instant, expiresAt: Instant,
        isLocal: Bool, refreshJitter: UInt8
    ) {
        self.record = record
        self.isLocal = isLocal
        self.refreshJitter = refreshJitter
        self.dataHash = dataHash
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
    }

    /// Milliseconds of life left at `now`.
    package func remaining(at now: Instant) -> Int { max(0, expiresAt - now) }

    /// The TTL left at `now`, in whole seconds, as it would be sent in a known-answer list.
    package func remainingTTL(at now: Instant) -> UInt32 { UInt32(clamping: remaining(at: now) / 1000) }

    /// True when a querier may list the record as a known answer (RFC 6762 §7.1: at least half its TTL left).
    func isWorthListing(at now: Instant) -> Bool { remaining(at: now) * 2 >= Int(record.ttl) * 1000 }

    /// The instant a refresh query is due (80, 85, 90, 95 % of the TTL, each plus a jitter of up to 2 %),
    /// or nil after the fourth.
    var nextRefresh: Instant? {
        guard !isLocal, refreshesSent < 4, record.ttl > 0 else { return nil }
        let hundredths = MDNSConstants.refreshPercentage(Int(refreshesSent)) * 100 + Int(refreshJitter)
        return receivedAt + Int(Int64(record.ttl) * Int64(hundredths) / 10)  // ttl s × hundredths/10000 × 1000 ms
    }

    /// The hash kept with each cached record: names inside the data fold their case, as they compare. It only
    /// picks candidates among the records of one name before their data are compared, so it need not resist chosen
    /// collisions (those only cost the comparisons it would have saved) and it is cheap: FNV-1a over eight-byte words.
    static func dataHash(_ data: RecordData) -> UInt32 {
        var hash = DataHash()
        switch data {
        case .a(let address): hash.add(UInt64(address.value))
        case .aaaa(let address):
            hash.add(address.high)
            hash.add(address.low)
        case .ptr(let name), .cname(let name): hash.add(name)
        case .srv(let srv):
            hash.add(UInt64(srv.priority) << 32 | UInt64(srv.weight) << 16 | UInt64(srv.port))
            hash.add(srv.target)
        case .txt(let txt): txt.rdata.withUnsafeBufferPointer { hash.add($0, folding: false) }
        case .nsec(let next, let types):
            hash.add(next)
            types.encoded.withUnsafeBufferPointer { hash.add($0, folding: false) }
        case .hinfo(let cpu, let os):
            cpu.withUnsafeBufferPointer { hash.add($0, folding: false) }
            os.withUnsafeBufferPointer { hash.add($0, folding: false) }
        case .opt(let bytes), .opaque(let bytes): bytes.withUnsafeBufferPointer { hash.add($0, folding: false) }
        }
        return UInt32(truncatingIfNeeded: hash.value ^ hash.value >> 32)
    }

    /// FNV-1a over 64-bit words.
    private struct DataHash {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325

        mutating func add(_ word: UInt64) { value = (value ^ word) &* 0x0000_0100_0000_01B3 }

        mutating func add(_ name: DNSName) { name.withWire { add($0, folding: true) } }

        /// Adds bytes eight at a time; with `folding`, ASCII letters as lower case (for names).
        mutating func add(_ bytes: UnsafeBufferPointer<UInt8>, folding: Bool) {
            var index = 0
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                add(folding ? Self.lowered(word) : word)
                index += 8
            }
            var tail = UInt64(bytes.count) << 56
            var shift: UInt64 = 0
            while index < bytes.count {
                let byte = bytes[index]
                tail |= UInt64(folding && byte &- 0x41 < 26 ? byte | 0x20 : byte) << shift
                shift += 8
                index += 1
            }
            add(tail)
        }

        /// ASCII letters among eight bytes lowered (as DNS names compare).
        private static func lowered(_ word: UInt64) -> UInt64 {
            let low7 = word & 0x7F7F_7F7F_7F7F_7F7F
            let upper =
                (low7 &+ 0x3F3F_3F3F_3F3F_3F3F) & ~(low7 &+ 0x2525_2525_2525_2525) & ~word & 0x8080_8080_8080_8080
            return word | upper >> 2
        }
    }
}

extension ResourceRecord {
    /// For two records that are the same record (``hasSameData(as:)``): true when their names, those inside the
    /// data included, also have the same letter case.
    func hasSameCase(as other: ResourceRecord) -> Bool {
        guard name.isIdentical(to: other.name) else { return false }
        switch (data, other.data) {
        case (.ptr(let a), .ptr(let b)), (.cname(let a), .cname(let b)): return a.isIdentical(to: b)
        case (.srv(let a), .srv(let b)): return a.target.isIdentical(to: b.target)
        case (.nsec(let a, _), .nsec(let b, _)): return a.isIdentical(to: b)
        default: return true  // no names inside: equal data are identical bytes
        }
    }
}
