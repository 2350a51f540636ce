/// One type-length-value item after a request's standard fields (present when the header has
/// `IPCFlags.trailingTLVs`): a big-endian `uint16` type, a big-endian `uint16` length, then the value.
///
/// mDNSResponder reads only the TLVs it knows, scanning the items in order and stopping silently at an
/// item that runs past the end of the body; Herald keeps the same tolerance and acts on none of them.
public struct IPCTLV: Hashable, Sendable {
    public var type: UInt16
    public var value: [UInt8]

    public init(type: UInt16, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// A binary property list of resolver configuration.
    public static let resolverConfigPlistData: UInt16 = 1
    /// A `uint8`: non-zero if privacy is required.
    public static let requirePrivacy: UInt16 = 2
    /// A `uint32` AAAA policy.
    public static let aaaaPolicy: UInt16 = 3
    /// A `uint32` failover policy.
    public static let failoverPolicy: UInt16 = 4
    /// A `uint32` time in seconds since 1970.
    public static let timestamp: UInt16 = 5
    /// A `uint32` validation policy.
    public static let validationPolicy: UInt16 = 6
    /// Opaque validation data.
    public static let validationData: UInt16 = 7
    /// A `uint8`: non-zero to ask for tracker information.
    public static let getTrackerString: UInt16 = 8
    /// A NUL-terminated tracker domain.
    public static let trackerString: UInt16 = 9
    /// A resolver configuration UUID.
    public static let resolverOverride: UInt16 = 10
    /// A `uint32` host key hash.
    public static let hostKeyHash: UInt16 = 11

    /// The value as a number when it is 1, 2 or 4 bytes long (big-endian), as mDNSResponder reads integers.
    public var integerValue: UInt32? {
        switch value.count {
        case 1: return UInt32(value[0])
        case 2: return UInt32(value[0]) << 8 | UInt32(value[1])
        case 4: return value.reduce(0) { $0 << 8 | UInt32($1) }
        default: return nil
        }
    }

    /// The well-formed items at the front of `bytes`, stopping at the first that does not fit.
    public static func parseAll(_ bytes: [UInt8]) -> [IPCTLV] {
        var items: [IPCTLV] = []
        var at = 0
        while bytes.count - at >= 4 {
            let type = UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
            let length = Int(UInt16(bytes[at + 2]) << 8 | UInt16(bytes[at + 3]))
            guard bytes.count - at - 4 >= length else { break }
            items.append(IPCTLV(type: type, value: Array(bytes[at + 4..<at + 4 + length])))
            at += 4 + length
        }
        return items
    }

    /// Appends the item. Refuses values longer than 65,535 bytes.
    public func write(to writer: inout IPCBodyWriter) throws(IPCEncodeError) {
        writer.writeUInt16(type)
        try writer.writeLengthPrefixedData(value, .rdata)
    }
}
