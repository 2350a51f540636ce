/// The type bit maps of an NSEC record (RFC 4034 §4.1.2): which record types exist at a name.
///
/// mDNS uses NSEC only to say "these are all the types I have" (RFC 6762 §6.1) and in practice only
/// window 0; any valid bit map is kept byte for byte.
public struct TypeBitmap: Hashable, Sendable, CustomStringConvertible {
    /// The encoded windows: window number, length (1–32), bitmap bytes; repeated in increasing order.
    public private(set) var encoded: [UInt8]

    init(uncheckedEncoded: [UInt8]) { self.encoded = uncheckedEncoded }

    /// Hashes the bytes in one go (an array of bytes hashes them one call per byte).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(encoded.count)
        encoded.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (lhs: TypeBitmap, rhs: TypeBitmap) -> Bool { WordwiseBytes.equal(lhs.encoded, rhs.encoded) }

    /// Builds the bit maps for a set of types.
    public init<Types: Sequence>(types: Types) where Types.Element == RecordType {
        var windows: [UInt8: [UInt8]] = [:]
        for type in types {
            let window = UInt8(type.rawValue >> 8)
            let low = Int(type.rawValue & 0xFF)
            var bits = windows[window] ?? []
            if bits.count <= low / 8 { bits += Array(repeating: 0, count: low / 8 + 1 - bits.count) }
            bits[low / 8] |= 0x80 >> UInt8(low % 8)
            windows[window] = bits
        }
        var encoded: [UInt8] = []
        for window in windows.keys.sorted() {
            let bits = windows[window]!
            encoded.append(window)
            encoded.append(UInt8(bits.count))
            encoded.append(contentsOf: bits)
        }
        self.encoded = encoded
    }

    /// Checks bytes against RFC 4034 §4.1.2 and wraps them. Returns the offset of the first problem on failure.
    public init(encoded: [UInt8]) throws(TypeBitmapError) {
        var index = 0
        var previousWindow = -1
        while index < encoded.count {
            guard index + 2 <= encoded.count else { throw .truncated(offset: index) }
            let window = Int(encoded[index])
            let length = Int(encoded[index + 1])
            guard window > previousWindow else { throw .windowsOutOfOrder(offset: index) }
            guard (1...32).contains(length) else { throw .badWindowLength(offset: index + 1, length: length) }
            guard index + 2 + length <= encoded.count else { throw .truncated(offset: index) }
            previousWindow = window
            index += 2 + length
        }
        self.encoded = encoded
    }

    /// The types present, in increasing order.
    public var types: [RecordType] {
        var result: [RecordType] = []
        var index = 0
        while index + 1 < encoded.count {
            let window = UInt16(encoded[index])
            let length = Int(encoded[index + 1])
            for byteIndex in 0..<length where index + 2 + byteIndex < encoded.count {
                let byte = encoded[index + 2 + byteIndex]
                for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                    result.append(RecordType(window << 8 | UInt16(byteIndex * 8 + bit)))
                }
            }
            index += 2 + length
        }
        return result
    }

    /// True when the bit for `type` is set.
    public func contains(_ type: RecordType) -> Bool {
        let window = UInt8(type.rawValue >> 8)
        let low = Int(type.rawValue & 0xFF)
        var index = 0
        while index + 1 < encoded.count {
            let length = Int(encoded[index + 1])
            if encoded[index] == window {
                guard low / 8 < length, index + 2 + low / 8 < encoded.count else { return false }
                return encoded[index + 2 + low / 8] & (0x80 >> UInt8(low % 8)) != 0
            }
            index += 2 + length
        }
        return false
    }

    public var description: String { types.map(\.description).joined(separator: " ") }
}

/// Why NSEC type bit maps are invalid; offsets are within the bit map field.
public enum TypeBitmapError: Error, Hashable, Sendable {
    case truncated(offset: Int)
    case windowsOutOfOrder(offset: Int)
    case badWindowLength(offset: Int, length: Int)

    var offset: Int {
        switch self {
        case .truncated(let offset), .windowsOutOfOrder(let offset), .badWindowLength(let offset, _): return offset
        }
    }
}
