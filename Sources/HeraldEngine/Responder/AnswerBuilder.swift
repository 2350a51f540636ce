import HeraldWire

/// Chooses the records that answer a query (RFC 6762 §6), minus those the asker already knows (§7.1), with
/// negative answers for names this host owns (§6.1), the additional records that save the asker a round trip
/// (RFC 6763 §12, RFC 6762 §6.2), and writes them into as few packets as the size limit allows.
struct AnswerBuilder {
    let authority: AuthorityTable
    let link: LinkID

    /// What this host says in reply to one query, by destination.
    struct Reply {
        var multicast: [ResourceRecord] = []
        var unicast: [ResourceRecord] = []
        /// RFC 6762 §6: a query whose every question this host answers, only with records it verified unique, needs
        /// no delay.
        var isImmediate = false

        var isEmpty: Bool { multicast.isEmpty && unicast.isEmpty }
    }

    /// Known-answer suppression (RFC 6762 §7.1): the asker lists the record with at least half its true TTL.
    /// (TTLs are compared without overflow: a peer may send any 32-bit value.)
    static func isSuppressed(_ answer: ResourceRecord, by knownAnswers: [ResourceRecord]) -> Bool {
        knownAnswers.contains { known in
            known.name == answer.name && known.hasSameData(as: answer) && UInt64(known.ttl) * 2 >= UInt64(answer.ttl)
        }
    }

    /// The reply to `message`'s questions, except those for `skipping` (names handled as probes).
    ///
    /// `wantsUnicast` marks a query sent straight to this host (RFC 6762 §5.5), answered as if every question
    /// were QU: by unicast, unless the record has not been multicast on the link for a quarter of its TTL (§5.4).
    /// An asker not `askerOnLink` (outside the link's subnets) gets every answer by multicast (§11).
    func reply(
        to message: DNSMessage, skipping: Set<DNSName>, wantsUnicast: Bool, askerOnLink: Bool = true,
        scheduler: ResponseScheduler, at now: Instant
    ) -> Reply {
        var reply = Reply()
        var seen = Set<RecordIdentity>()
        var questions = 0
        var allUnique = true
        for question in message.questions where skipping.isEmpty || !skipping.contains(question.name) {
            // Every record here is of class IN: a question of another class (CH, HS, …) has no answer at all.
            guard question.recordClass == .internet || question.recordClass == .any else {
                allUnique = false
                continue
            }
            questions += 1
            let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
            let owned = authority.records(answering: key, on: link)
            var answers = owned.map(\.record).filter { !Self.isSuppressed($0, by: message.answers) }
            if owned.isEmpty {
                // A name this host owns, without the type asked for: say so (RFC 6762 §6.1), unless the asker knows.
                guard question.type != .any, let nsec = nsec(for: question.name) else {
                    allUnique = false
                    continue
                }
                answers = Self.isSuppressed(nsec, by: message.answers) ? [] : [nsec]
            }
            if owned.contains(where: { !$0.isUnique }) { allUnique = false }
            for answer in answers where seen.insert(RecordIdentity(answer)).inserted {
                let quarterTTL = Int(answer.ttl) * 250
                if (question.unicastResponse || wantsUnicast) && askerOnLink
                    && scheduler.wasMulticast(answer, on: link, within: quarterTTL, of: now)
                {
                    reply.unicast.append(answer)
                } else {
                    reply.multicast.append(answer)
                }
            }
        }
        // RFC 6762 §6: when this host answers every question, and only with records verified unique, nobody else
        // answers: no random delay.
        reply.isImmediate = questions > 0 && allUnique
        return reply
    }

    /// Additional records for a set of answers: SRV and TXT for a PTR's instance, addresses for an SRV's
    /// target, the other family's addresses for an address record, and NSEC for names this host owns that
    /// lack a type the asker will want next (e.g. no AAAA). Never a record already among the answers.
    func additionals(for answers: [ResourceRecord]) -> [ResourceRecord] {
        var result: [ResourceRecord] = []
        var seen = Set(answers.map(RecordIdentity.init))
        func add(_ record: ResourceRecord) {
            if seen.insert(RecordIdentity(record)).inserted { result.append(record) }
        }
        func addAll(named name: DNSName, types: [RecordType]) {
            for type in types {
                for record in authority.records(answering: RecordKey(name: name, type: type), on: link) {
                    add(record.record)
                }
            }
        }
        var hosts: [DNSName] = []
        var instances: [DNSName] = []
        for answer in answers {
            switch answer.data {
            case .ptr(let instance) where answer.type == .ptr:
                let srvs = authority.records(answering: RecordKey(name: instance, type: .srv), on: link)
                guard !srvs.isEmpty else { continue }  // a reverse-mapping PTR, or not ours
                instances.append(instance)
                addAll(named: instance, types: [.srv, .txt])
                for record in srvs { if case .srv(let srv) = record.record.data { hosts.append(srv.target) } }
            case .srv(let srv):
                hosts.append(srv.target)
            case .a, .aaaa:
                hosts.append(answer.name)
            default:
                break
            }
        }
        for host in hosts {
            addAll(named: host, types: [.a, .aaaa])
            if let nsec = nsec(for: host), case .nsec(_, let types) = nsec.data,
                !(types.types.contains(.a) && types.types.contains(.aaaa))
            {
                add(nsec)
            }
        }
        // NSEC for answered instance names too, saying which types exist (RFC 6762 §6.1).
        for instance in instances { if let nsec = nsec(for: instance) { add(nsec) } }
        return result
    }

    /// The NSEC record asserting which types exist at a name this host owns, or nil (RFC 6762 §6.1: the restricted
    /// form, the name itself as next name, never the NSEC bit).
    func nsec(for name: DNSName) -> ResourceRecord? {
        guard let types = authority.ownedTypes(at: name, on: link) else { return nil }
        let ttl =
            authority.answers(to: RecordKey(name: name, type: .any), on: link).map(\.record.record.ttl).min()
            ?? MDNSConstants.hostRecordTTL
        return ResourceRecord(
            name: name, ttl: ttl, data: .nsec(next: name, types: TypeBitmap(types: types)),
            cacheFlush: true)
    }

    /// Writes answers (and, in the last packet, as many additionals as fit) into packets of `room.shared` bytes at
    /// most, each record once. An answer too big to share a packet goes alone in one of up to `room.alone` bytes,
    /// which may be fragmented (RFC 6762 §17 allows one record in a fragmented datagram); a bigger one is left out.
    static func pack(
        answers: [ResourceRecord], additionals: [ResourceRecord], room: MessageRoom, id: UInt16 = 0,
        questions: [DNSQuestion] = [],
        recordDataCompression: MessageWriter.RecordDataCompression = .multicastDNS
    ) -> [[UInt8]] {
        var seen = Set<RecordIdentity>()
        let answers = answers.filter { seen.insert(RecordIdentity($0)).inserted }
        let additionals = additionals.filter { seen.insert(RecordIdentity($0)).inserted }
        func message(limit: Int) -> MessageWriter {
            var writer = MessageWriter(
                id: id, flags: .authoritativeResponse, limit: limit,
                recordDataCompression: recordDataCompression)
            for question in questions { writer.append(question) }
            return writer
        }
        var packets: [[UInt8]] = []
        var writer = message(limit: room.shared)
        for answer in answers where !writer.append(answer, to: .answer) {
            if writer.count(of: .answer) > 0 {
                packets.append(writer.message)
                writer = message(limit: room.shared)
                if writer.append(answer, to: .answer) { continue }
            }
            var alone = message(limit: room.alone)
            if alone.append(answer, to: .answer) { packets.append(alone.message) }
        }
        for additional in additionals { writer.append(additional, to: .additional) }
        if writer.count(of: .answer) > 0 { packets.append(writer.message) }
        return packets
    }
}
