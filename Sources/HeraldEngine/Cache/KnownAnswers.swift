import HeraldWire

/// The known-answer list of a peer's query (RFC 6762 §7.1), ready to be compared with cached records: each
/// record's data hash is worked out once, so that telling whether a cached record is listed compares integers
/// first, with no lookup by name.
struct KnownAnswers {
    let records: [ResourceRecord]
    private let hashes: [UInt32]
    /// For a long list, the positions of the records by data hash: a packet listing hundreds of known answers for a
    /// name with thousands of cached records must not compare every pair.
    private let positionsByHash: [UInt32: [Int]]?
    static let indexedLength = 16

    init(_ records: [ResourceRecord]) {
        let hashes = records.map { CachedRecord.dataHash($0.data) }
        self.records = records
        self.hashes = hashes
        positionsByHash =
            records.count > Self.indexedLength ? Dictionary(grouping: hashes.indices, by: { hashes[$0] }) : nil
    }

    var isEmpty: Bool { records.isEmpty }

    /// True when the list holds `cached` (same name, type, class and data).
    func contains(_ cached: UnsafePointer<CachedRecord>) -> Bool {
        if let positionsByHash {
            return positionsByHash[cached.pointee.dataHash]?.contains { lists(cached, at: $0) } ?? false
        }
        return records.indices.contains { lists(cached, at: $0) }
    }

    /// The positions where the list holds `cached`.
    func positions(of cached: UnsafePointer<CachedRecord>) -> [Int] {
        if let positionsByHash {
            return positionsByHash[cached.pointee.dataHash]?.filter { lists(cached, at: $0) } ?? []
        }
        return records.indices.filter { lists(cached, at: $0) }
    }

    /// True when the record at `index` is `cached`.
    func lists(_ cached: UnsafePointer<CachedRecord>, at index: Int) -> Bool {
        hashes[index] == cached.pointee.dataHash && records[index].type == cached.pointee.record.type
            && records[index].recordClass == cached.pointee.record.recordClass
            && records[index].name == cached.pointee.record.name && records[index].data == cached.pointee.record.data
    }

    /// The positions of the records that answer a question.
    func indices(answering question: RecordKey) -> [Int] {
        records.indices.filter { index in
            (question.type == .any || question.type == records[index].type)
                && (question.recordClass == .any || question.recordClass == records[index].recordClass)
                && question.name == records[index].name
        }
    }
}
