/// Remembers where each name suffix was written in a message being built, keyed by a hash of the
/// suffix's exact bytes. Lookups are only hints: the writer checks the bytes before using an offset.
struct CompressionTable: Sendable {
    /// RFC 1035 §4.1.4: a pointer has 14 bits of offset.
    static let maxPointerTarget = 0x3FFF

    private var keys: [UInt64]
    private var offsets: [Int32]
    private var used = 0

    init() {
        keys = [UInt64](repeating: 0, count: 64)
        offsets = [Int32](repeating: -1, count: 64)
    }

    /// Extends a suffix hash with one more label on the left (FNV-1a over the label's length and bytes).
    static func extend(_ hash: UInt64, with wire: UnsafeBufferPointer<UInt8>, label start: Int) -> UInt64 {
        var value = hash ^ 0x9E37_79B9_7F4A_7C15
        let end = start + 1 + Int(wire[start])
        for index in start..<end {
            value = (value ^ UInt64(wire[index])) &* 0x0000_0100_0000_01B3
        }
        return value ^ (value >> 29)
    }

    func lookup(_ key: UInt64) -> Int? {
        let key = key == 0 ? 1 : key
        let mask = keys.count - 1
        var slot = Int(truncatingIfNeeded: key) & mask
        while keys[slot] != 0 {
            if keys[slot] == key { return offsets[slot] >= 0 ? Int(offsets[slot]) : nil }
            slot = (slot + 1) & mask
        }
        return nil
    }

    mutating func insert(_ key: UInt64, offset: Int) {
        let key = key == 0 ? 1 : key  // 0 marks an empty slot
        if (used + 1) * 2 > keys.count { grow() }
        let mask = keys.count - 1
        var slot = Int(truncatingIfNeeded: key) & mask
        while keys[slot] != 0 {
            if keys[slot] == key {
                if offsets[slot] < 0 { offsets[slot] = Int32(offset) }  // revive an entry forgotten by a rollback
                return
            }
            slot = (slot + 1) & mask
        }
        keys[slot] = key
        offsets[slot] = Int32(offset)
        used += 1
    }

    /// Drops every offset at or after `mark` (the bytes there were rolled back). The keys stay, so probe
    /// chains remain intact.
    mutating func forget(offsetsFrom mark: Int) {
        for slot in offsets.indices where offsets[slot] >= mark { offsets[slot] = -2 }
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldOffsets = offsets
        keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
        offsets = [Int32](repeating: -1, count: oldKeys.count * 2)
        used = 0
        for slot in oldKeys.indices where oldKeys[slot] != 0 && oldOffsets[slot] >= 0 {
            insert(oldKeys[slot], offset: Int(oldOffsets[slot]))
        }
    }
}
