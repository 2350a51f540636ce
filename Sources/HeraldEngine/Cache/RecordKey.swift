import HeraldWire

/// Name, type and class: what identifies a resource record set (RFC 2181 §5).
/// Name comparison is case-insensitive, as DNSName's is.
public struct RecordKey: Hashable, Sendable, CustomStringConvertible {
    public var name: DNSName
    public var type: RecordType
    public var recordClass: RecordClass

    public init(name: DNSName, type: RecordType, recordClass: RecordClass = .internet) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
    }

    public init(_ record: ResourceRecord) {
        self.init(name: record.name, type: record.type, recordClass: record.recordClass)
    }

    /// True when a question for (name, type, class) asks for records with this key (ANY matches every type and class).
    public func isAnswered(byQuestionFor question: RecordKey) -> Bool {
        (question.type == .any || question.type == type)
            && (question.recordClass == .any || question.recordClass == recordClass)
            && question.name == name
    }

    public var description: String { "\(name) \(recordClass) \(type)" }

    public func hash(into hasher: inout Hasher) {
        name.hash(into: &hasher)
        hasher.combine(UInt32(type.rawValue) << 16 | UInt32(recordClass.rawValue))
    }
}

/// A record's identity regardless of TTL and cache-flush bit: its set and its data.
struct RecordIdentity: Hashable, Sendable {
    var key: RecordKey
    var data: RecordData

    init(_ record: ResourceRecord) {
        key = RecordKey(record)
        data = record.data
    }
}

extension ResourceRecord {
    /// The record set this record belongs to.
    public var key: RecordKey { RecordKey(self) }

    /// True when the two records carry the same data (RFC 6762 §6: names inside data compare case-insensitively).
    public func hasSameData(as other: ResourceRecord) -> Bool {
        type == other.type && recordClass == other.recordClass && data == other.data
    }
}
