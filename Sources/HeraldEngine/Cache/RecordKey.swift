import HeraldWire

/// Name, type and class: what identifies a resource record set (RFC 2181 §5).
/// Name comparison is case-insensitive, as DNSName's is.
package struct RecordKey: Hashable, Sendable, CustomStringConvertible {
    package var name: DNSName
    package var type: RecordType
    package var recordClass: RecordClass

    package init(name: DNSName, type: RecordType, recordClass: RecordClass = .internet) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
    }

    package init(_ record: ResourceRecord) {
        self.init(name: record.name, type: record.type, recordClass: record.recordClass)
    }

    /// True when a question for (name, type, class) asks for records with this key (ANY matches every type and class).
    package func isAnswered(byQuestionFor question: RecordKey) -> Bool {
        (question.type == .any || question.type == type)
            && (question.recordClass == .any || question.recordClass == recordClass)
            && question.name == name
    }

    package var description: String { "\(name) \(recordClass) \(type)" }

    package func hash(into hasher: inout Hasher) {
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
    package var key: RecordKey { RecordKey(self) }

    /// True when the two records carry the same data (RFC 6762 §6: names inside data compare case-insensitively).
    package func hasSameData(as other: ResourceRecord) -> Bool {
        type == other.type && recordClass == other.recordClass && data == other.data
    }
}
