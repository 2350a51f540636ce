/// A domain name, held as its labels in wire form: each label is preceded by its length byte, and the
/// terminating root label is left out (the root name has no storage at all).
///
/// Labels are arbitrary bytes (UTF-8 is allowed anywhere, RFC 6763 §4.3). Comparison and hashing fold
/// ASCII letters only (RFC 1035 §2.3.3, RFC 6762 §16), so `MyHost.local.` equals `myhost.LOCAL.`; the
/// original case is preserved for display and on the wire.
///
/// The bytes live in a heap block that may be shared: by every copy of the name, and, for names read
/// from a message, by the other names of that message (one allocation per message instead of one per
/// name). Use ``compacted()`` before keeping a name for long on its own.
///
/// `@unchecked Sendable`: the stored reference is to a ``NameStorage`` block whose bytes in the range
/// this name covers are written once, before the name exists, and never changed (there is no mutating
/// API); later names written into the same block use other, disjoint ranges. So sharing cannot race.
public struct DNSName: @unchecked Sendable {
    /// The heap block holding the wire bytes; nil for the root.
    @usableFromInline let storage: NameStorage?
    /// Where this name's bytes start in `storage`, and how many there are.
    @usableFromInline let start: UInt32
    @usableFromInline let length: UInt32

    /// RFC 1035 §2.3.4: a label holds at most 63 bytes.
    public static let maxLabelLength = 63
    /// RFC 1035 §2.3.4: a name takes at most 255 bytes on the wire, length bytes and root label included.
    public static let maxWireLength = 255

    /// The root name `.`.
    public static let root = DNSName(storage: nil)

    init(storage: NameStorage?, start: Int = 0, length: Int = 0) {
        self.storage = storage
        self.start = UInt32(start)
        self.length = UInt32(length)
    }

    /// Wraps wire bytes that the caller has already validated.
    init(uncheckedWire: [UInt8]) {
        if uncheckedWire.isEmpty {
            self.init(storage: nil)
        } else {
            let storage = uncheckedWire.withUnsafeBufferPointer { NameStorage.make(copying: $0) }
            self.init(storage: storage, start: 0, length: uncheckedWire.count)
        }
    }

    /// The same name in a block of its own, so that keeping it does not keep the other names of the
    /// message it was read from alive. Returns `self` when it already owns its block.
    public func compacted() -> DNSName {
        guard let storage, storage.reservedCount > Int(length) else { return self }
        return withWire { DNSName(uncheckedWire: Array($0)) }
    }

    /// The labels in wire form without the final zero byte.
    public var wire: [UInt8] { withWire { Array($0) } }

    /// Calls `body` with the labels in wire form (no final zero byte), without copying them.
    @inlinable
    public func withWire<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        guard let storage else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try storage.withUnsafeMutablePointerToElements { elements in
            try body(UnsafeBufferPointer(start: elements + Int(start), count: Int(length)))
        }
    }

    /// Builds a name from its labels, validating their lengths.
    public init<Labels: Sequence>(labels: Labels) throws(DNSNameError)
    where Labels.Element: Collection, Labels.Element.Element == UInt8 {
        var storage: [UInt8] = []
        for label in labels {
            let count = label.count
            if count == 0 { throw .emptyLabel }
            if count > Self.maxLabelLength { throw .labelTooLong(length: count) }
            storage.append(UInt8(count))
            storage.append(contentsOf: label)
            if storage.count + 1 > Self.maxWireLength { throw .nameTooLong(length: storage.count + 1) }
        }
        self.init(uncheckedWire: storage)
    }

    /// Builds a name from labels given as strings (their UTF-8 bytes, taken literally: no escapes).
    public init(labelStrings: [String]) throws(DNSNameError) {
        try self.init(labels: labelStrings.map { Array($0.utf8) })
    }

    /// The number of bytes this name takes on the wire without compression, root label included.
    public var wireLength: Int { Int(length) + 1 }

    /// True for the root name.
    public var isRoot: Bool { storage == nil }

    /// The offsets in `wire` at which each label's length byte sits.
    public var labelOffsets: [Int] {
        withWire { wire in
            var offsets: [Int] = []
            var index = 0
            while index < wire.count {
                offsets.append(index)
                index += 1 + Int(wire[index])
            }
            return offsets
        }
    }

    /// The number of labels, not counting the root.
    public var labelCount: Int {
        withWire { wire in
            var count = 0
            var index = 0
            while index < wire.count {
                count += 1
                index += 1 + Int(wire[index])
            }
            return count
        }
    }

    /// The labels' bytes, first (leftmost) label first.
    public var labels: [[UInt8]] {
        withWire { wire in
            var result: [[UInt8]] = []
            var index = 0
            while index < wire.count {
                let end = index + 1 + Int(wire[index])
                result.append(Array(wire[(index + 1)..<end]))
                index = end
            }
            return result
        }
    }

    /// The first label's bytes, or nil for the root.
    public var firstLabel: [UInt8]? {
        withWire { wire in wire.isEmpty ? nil : Array(wire[1..<(1 + Int(wire[0]))]) }
    }

    /// The name without its first label (the root's parent is nil).
    public var parent: DNSName? {
        withWire { wire in
            wire.isEmpty ? nil : DNSName(uncheckedWire: Array(wire[(1 + Int(wire[0]))...]))
        }
    }

    /// The name made of the last `count` labels.
    public func suffix(labelCount count: Int) -> DNSName {
        let offsets = labelOffsets
        guard count < offsets.count else { return self }
        guard count > 0 else { return .root }
        return withWire { DNSName(uncheckedWire: Array($0[offsets[offsets.count - count]...])) }
    }

    /// This name followed by `other` (`a.b` + `c.d` is `a.b.c.d`).
    public func appending(_ other: DNSName) throws(DNSNameError) -> DNSName {
        let length = wireLength + other.wireLength - 1
        if length > Self.maxWireLength { throw .nameTooLong(length: length) }
        return DNSName(uncheckedWire: wire + other.wire)
    }

    /// A name with `label` added in front of this one.
    public func prepending<Label: Collection>(label: Label) throws(DNSNameError) -> DNSName
    where Label.Element == UInt8 {
        let count = label.count
        if count == 0 { throw .emptyLabel }
        if count > Self.maxLabelLength { throw .labelTooLong(length: count) }
        let length = wireLength + count + 1
        if length > Self.maxWireLength { throw .nameTooLong(length: length) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length - 1)
        bytes.append(UInt8(count))
        bytes.append(contentsOf: label)
        bytes.append(contentsOf: wire)
        return DNSName(uncheckedWire: bytes)
    }

    /// A name with a label given as a string (its UTF-8 bytes, no escapes) added in front.
    public func prepending(label: String) throws(DNSNameError) -> DNSName {
        try prepending(label: Array(label.utf8))
    }

    /// True when this name ends with `suffix` (compared case-insensitively, label by label).
    public func hasSuffix(_ suffix: DNSName) -> Bool {
        withWire { mine in
            suffix.withWire { theirs in
                if theirs.isEmpty { return true }
                guard theirs.count <= mine.count else { return false }
                // The suffix must start on a label boundary of this name.
                let start = mine.count - theirs.count
                var index = 0
                while index < start { index += 1 + Int(mine[index]) }
                guard index == start else { return false }
                return ASCIICase.equalFolded(UnsafeBufferPointer(rebasing: mine[start...]), theirs)
            }
        }
    }

    /// True when the two names have the same bytes, case included.
    public func isIdentical(to other: DNSName) -> Bool {
        if storage === other.storage && start == other.start && length == other.length { return true }
        guard length == other.length else { return false }
        return withWire { a in other.withWire { b in WordwiseBytes.equal(a, b) } }
    }

    /// The name with ASCII letters lowered, as used for canonical ordering (RFC 4034 §6.2).
    public var lowercased: DNSName {
        DNSName(uncheckedWire: wire.map(ASCIICase.lower))
    }
}

extension DNSName: Hashable {
    public static func == (lhs: DNSName, rhs: DNSName) -> Bool {
        if lhs.storage === rhs.storage && lhs.start == rhs.start && lhs.length == rhs.length { return true }
        return lhs.withWire { a in rhs.withWire { b in ASCIICase.equalFolded(a, b) } }
    }

    public func hash(into hasher: inout Hasher) {
        withWire { ASCIICase.hashFolded($0, into: &hasher) }
    }
}

extension DNSName: Comparable {
    /// Canonical DNS name order (RFC 4034 §6.1): labels compared right to left, each as lowered bytes.
    public static func < (lhs: DNSName, rhs: DNSName) -> Bool {
        let left = lhs.labels.reversed().map { $0.map(ASCIICase.lower) }
        let right = rhs.labels.reversed().map { $0.map(ASCIICase.lower) }
        for (a, b) in zip(left, right) where a != b {
            return a.lexicographicallyPrecedes(b)
        }
        return left.count < right.count
    }
}

/// Why a name could not be built.
public enum DNSNameError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyLabel
    case labelTooLong(length: Int)
    case nameTooLong(length: Int)
    case invalidEscape(String)

    public var description: String {
        switch self {
        case .emptyLabel:
            return "a name cannot contain an empty label (two dots in a row, or a leading dot)"
        case .labelTooLong(let length):
            return "a label of \(length) bytes is longer than the 63 allowed (RFC 1035 §2.3.4)"
        case .nameTooLong(let length):
            return "a name of \(length) bytes on the wire is longer than the 255 allowed (RFC 1035 §2.3.4)"
        case .invalidEscape(let text):
            return
                "invalid escape '\(text)': use \\. for a dot, \\\\ for a backslash, or \\DDD with a decimal byte value ≤ 255"
        }
    }
}

/// ASCII-only case folding, as DNS name comparison requires (non-ASCII bytes compare exactly).
@usableFromInline
enum ASCIICase {
    @inlinable @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Lowers the ASCII letters among eight bytes at once: a byte from `A` to `Z` gets bit 0x20, every other
    /// byte (non-ASCII ones included) is left alone, exactly as ``lower(_:)`` does byte by byte.
    @inlinable @inline(__always)
    static func lower(word: UInt64) -> UInt64 {
        let low7 = word & 0x7F7F_7F7F_7F7F_7F7F
        let atLeastA = low7 &+ 0x3F3F_3F3F_3F3F_3F3F  // top bit set where the low 7 bits are ≥ 0x41
        let pastZ = low7 &+ 0x2525_2525_2525_2525  // top bit set where they are ≥ 0x5B
        let upper = atLeastA & ~pastZ & ~word & 0x8080_8080_8080_8080
        return word | (upper >> 2)
    }

    @inlinable
    static func equalFolded(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        let count = a.count
        var index = 0
        while index + 8 <= count {
            let x = WordwiseBytes.word(a, at: index)
            let y = WordwiseBytes.word(b, at: index)
            if x != y && lower(word: x) != lower(word: y) { return false }
            index += 8
        }
        while index < count {
            let x = a[index]
            let y = b[index]
            if x != y && lower(x) != lower(y) { return false }
            index += 1
        }
        return true
    }

    /// Hashes the bytes as lowered, eight at a time.
    @inlinable
    static func hashFolded(_ bytes: UnsafeBufferPointer<UInt8>, into hasher: inout Hasher) {
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            hasher.combine(lower(word: WordwiseBytes.word(bytes, at: index)))
            index += 8
        }
        // The last 0–7 bytes, and the length (at most 255) in the top byte: one word.
        var tail = UInt64(truncatingIfNeeded: count) << 56
        var shift = 0
        while index < count {
            tail |= UInt64(lower(bytes[index])) << shift
            shift += 8
            index += 1
        }
        hasher.combine(tail)
    }
}

/// The heap block behind non-root ``DNSName``s: wire bytes in the tail, each name covering its own
/// range. A block made for one name holds exactly that name; a parser fills one block with the names of
/// a message.
@usableFromInline
final class NameStorage: ManagedBuffer<Int, UInt8> {
    /// A new block holding a copy of `bytes` (which must not be empty).
    static func make(copying bytes: UnsafeBufferPointer<UInt8>) -> NameStorage {
        let block = make(capacity: bytes.count)
        block.withUnsafeMutablePointerToElements { $0.update(from: bytes.baseAddress!, count: bytes.count) }
        return block
    }

    /// A new block with room for `capacity` bytes, to be filled by the caller before any name uses them.
    static func make(capacity: Int) -> NameStorage {
        unsafeDowncast(create(minimumCapacity: capacity) { _ in capacity }, to: NameStorage.self)
    }

    /// The room asked for when the block was made (kept in the header: `ManagedBuffer.capacity` may be
    /// larger and is slow to ask).
    @usableFromInline var reservedCount: Int { header }
}
