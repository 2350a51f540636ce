import HeraldWire

/// Chooses the records that answer questions and the additional records that save the asker a round trip
/// (RFC 6763 §12, RFC 6762 §6.1), and writes them into as few packets as the size limit allows.
struct AnswerBuilder {
    let authority: AuthorityTable
    let link: LinkID

    /// Additional records for a set of answers: SRV and TXT for a PTR's instance, addresses for an SRV's
    /// target, and NSEC for names this host owns but has no record of the type (e.g. no AAAA).
    func additionals(for answers: [ResourceRecord]) -> [ResourceRecord] {
        var result: [ResourceRecord] = []
        var seen = Set(answers.map(RecordIdentity.init))
        func add(_ record: ResourceRecord) {
            if seen.insert(RecordIdentity(record)).inserted { result.append(record) }
        }
        func addAll(named name: DNSName, types: [RecordType]) {
            for type in types {
                for entry in authority.answers(to: RecordKey(name: name, type: type), on: link) { add(entry.record.record) }
            }
        }
        var targets: [DNSName] = []
        for answer in answers {
            switch answer.data {
            case .ptr(let instance) where answer.type == .ptr:
                addAll(named: instance, types: [.srv, .txt])
                for entry in authority.answers(to: RecordKey(name: instance, type: .srv), on: link) {
                    if case .srv(let srv) = entry.record.record.data { targets.append(srv.target) }
                }
            case .srv(let srv):
                targets.append(srv.target)
            default:
                break
            }
        }
        for target in targets {
            addAll(named: target, types: [.a, .aaaa])
            if let nsec = nsec(for: target) { add(nsec) }
        }
        // NSEC for answered instance names too, saying which types exist (RFC 6762 §6.1).
        for answer in answers where answer.type == .ptr {
            if case .ptr(let instance) = answer.data, let nsec = nsec(for: instance) { add(nsec) }
        }
        return result
    }

    /// The NSEC record asserting which types exist at a name this host owns, or nil.
    func nsec(for name: DNSName) -> ResourceRecord? {
        guard let types = authority.ownedTypes(at: name, on: link) else { return nil }
        let ttl = authority.answers(to: RecordKey(name: name, type: .any), on: link).map(\.record.record.ttl).min()
            ?? MDNSConstants.hostRecordTTL
        return ResourceRecord(name: name, ttl: ttl, data: .nsec(next: name, types: TypeBitmap(types: types)),
                              cacheFlush: true)
    }

    /// Writes answers (and as many additionals as fit) into packets no larger than `limit`.
    static func pack(answers: [ResourceRecord], additionals: [ResourceRecord], limit: Int, id: UInt16 = 0,
                     questions: [DNSQuestion] = []) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var writer = MessageWriter(id: id, flags: .authoritativeResponse, limit: limit)
        for question in questions { writer.append(question) }
        for answer in answers where !writer.append(answer, to: .answer) {
            if writer.count(of: .answer) == 0 { continue }  // too big for any packet: leave it out
            packets.append(writer.message)
            writer = MessageWriter(id: id, flags: .authoritativeResponse, limit: limit)
            writer.append(answer, to: .answer)
        }
        for additional in additionals { writer.append(additional, to: .additional) }
        if writer.count(of: .answer) > 0 { packets.append(writer.message) }
        return packets
    }
}
