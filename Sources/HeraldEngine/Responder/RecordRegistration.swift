import HeraldWire

/// A record a client publishes on its own, under a name of its choosing (DNSServiceRegisterRecord).
public struct RecordRegistration: Hashable, Sendable {
    /// The record with its name, type, class, TTL and data (the cache-flush bit is set from `unique`).
    public var record: ResourceRecord
    /// Unique records (kDNSServiceFlagsUnique) are probed first and defended; a conflict fails the registration.
    /// Shared ones (kDNSServiceFlagsShared) are announced at once and never conflict (RFC 6762 §8.1, §6.6).
    public var unique: Bool
    /// Publish only on this interface (nil: every interface).
    public var interfaceIndex: Int?

    public init(record: ResourceRecord, unique: Bool, interfaceIndex: Int? = nil) {
        self.record = record
        self.unique = unique
        self.interfaceIndex = interfaceIndex
    }
}

/// A further record of a service instance's name (DNSServiceAddRecord): unique like the instance's SRV and TXT,
/// which the registration's probing already claimed.
public struct AddedRecord: Hashable, Sendable {
    /// The client's reference to the record, unique within its registration.
    public var id: UInt64
    public var type: RecordType
    public var data: RecordData
    public var ttl: UInt32

    public init(id: UInt64, type: RecordType, data: RecordData, ttl: UInt32) {
        self.id = id
        self.type = type
        self.data = data
        self.ttl = ttl
    }
}
