import HeraldWire

/// Incoming packets: queries are answered (RFC 6762 §6, §7), probes tie-broken or defended (§8),
/// responses checked for conflicts (§9) and cached (§10).
extension MDNSEngine {
    /// Handles a datagram that arrived on `link` from `source`. `toUnicast` is true when it was sent to this
    /// host's own address rather than the mDNS group.
    public mutating func receive(_ bytes: [UInt8], from source: SocketAddress, on link: LinkID, toUnicast: Bool = false,
                                 at time: Instant) {
        now = max(now, time)
        guard links[link] != nil else { return }
        statistics.packetsReceived += 1
        let message: DNSMessage
        do {
            message = try DNSMessage(parsing: bytes)
        } catch {
            statistics.malformedPackets += 1
            return
        }
        // RFC 6762 §18.3, §18.11: other opcodes and non-zero response codes are ignored.
        guard message.flags.opcode == 0, message.flags.responseCode == 0 else { return }
        // Our own multicast, heard again through another interface on the same link or a reflector.
        if source.port == HeraldWire.mdnsPort && ownAddresses.contains(source.address) { return }
        if message.isResponse {
            receiveResponse(message, from: source, on: link, toUnicast: toUnicast)
        } else {
            receiveQuery(message, from: source, on: link, toUnicast: toUnicast)
        }
    }

    // MARK: - Queries

    private mutating func receiveQuery(_ message: DNSMessage, from source: SocketAddress, on link: LinkID, toUnicast: Bool) {
        if source.port != HeraldWire.mdnsPort {
            answerLegacyQuery(message, from: source, on: link)
            return
        }
        querier.observe(peerQuery: message, on: link, at: now, cache: caches[link])
        // A packet that only continues a truncated known-answer list.
        scheduler.suppress(knownAnswers: message.answers, from: source.address, on: link)
        let probedNames = handleProbes(message, on: link)

        var multicastAnswers: [ResourceRecord] = []
        var unicastAnswers: [ResourceRecord] = []
        var allUnique = true
        for question in message.questions {
            let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
            noteUnansweredQuery(key, knownAnswers: message.answers, on: link)
            guard !probedNames.contains(question.name) else { continue }
            var answers = authority.answers(to: key, on: link).map(\.record.record)
            // Known-answer suppression (RFC 6762 §7.1): the asker holds it with at least half our TTL.
            answers.removeAll { answer in
                message.answers.contains { $0.name == answer.name && $0.hasSameData(as: answer) && $0.ttl * 2 >= answer.ttl }
            }
            if answers.isEmpty, question.type != .any, !isSuppressedNegative(key, message: message),
               let nsec = AnswerBuilder(authority: authority, link: link).nsec(for: question.name) {
                answers = [nsec]  // a name we own without that type: say so (RFC 6762 §6.1)
            }
            for answer in answers {
                if !answer.cacheFlush { allUnique = false }
                // QU (or a direct unicast query): unicast, unless the record has not been multicast on this
                // link for a quarter of its TTL (RFC 6762 §5.4).
                let wantsUnicast = question.unicastResponse || toUnicast
                if wantsUnicast && scheduler.wasMulticast(answer, on: link, within: Int(answer.ttl) * 250, of: now) {
                    unicastAnswers.append(answer)
                } else {
                    multicastAnswers.append(answer)
                }
            }
        }
        if !unicastAnswers.isEmpty {
            sendResponse(unicastAnswers, on: link, to: .unicast(source))
        }
        guard !multicastAnswers.isEmpty else { return }
        let delay: Int
        if message.flags.isTruncated {
            delay = random.milliseconds(in: MDNSConstants.truncatedQueryDelayMin...MDNSConstants.truncatedQueryDelayMax)
        } else if allUnique {
            delay = 0
        } else {
            delay = random.milliseconds(in: MDNSConstants.sharedAnswerDelayMin...MDNSConstants.sharedAnswerDelayMax)
        }
        scheduler.schedule(multicastAnswers, on: link, to: .multicast, at: now + delay,
                           knownAnswerSource: message.flags.isTruncated ? source.address : nil)
        if delay == 0 { sendDueResponses() }
    }

    /// A known NSEC in the query means the asker already knows the type is absent.
    private func isSuppressedNegative(_ key: RecordKey, message: DNSMessage) -> Bool {
        message.answers.contains { $0.type == .nsec && $0.name == key.name }
    }

    /// Probe handling (RFC 6762 §8.2, §9): a probe for a name we are probing is tie-broken; a probe for a
    /// name we have announced is answered at once. Returns the names handled here.
    private mutating func handleProbes(_ message: DNSMessage, on link: LinkID) -> Set<DNSName> {
        guard !message.authorities.isEmpty else { return [] }
        var handled = Set<DNSName>()
        for question in message.questions {
            let theirs = message.authorities.filter { $0.name == question.name }
            guard !theirs.isEmpty else { continue }
            for id in publications.keys.sorted() {
                guard let publication = publications[id], let phase = publication.phases[link] else { continue }
                let ours = publication.uniqueRecords(on: link).map(\.record).filter { $0.name == question.name }
                guard !ours.isEmpty else { continue }
                handled.insert(question.name)
                if phase.isProbing {
                    if ProbeTieBreak.compare(ours: ours, theirs: theirs) == .weLose { lostTieBreak(id, on: link) }
                } else if !theirs.allSatisfy({ authority.containsAnywhere($0) }) {
                    // Defend our name: answer immediately, rate-limited to once per 250 ms.
                    scheduler.schedule(ours, on: link, to: .multicast, at: now, defendsProbe: true)
                }
            }
        }
        if !handled.isEmpty { sendDueResponses() }
        return handled
    }

    /// Legacy unicast (RFC 6762 §6.7): a one-shot resolver on another port gets a conventional unicast
    /// reply echoing its ID and question, TTLs capped at 10 s and no cache-flush bits.
    private mutating func answerLegacyQuery(_ message: DNSMessage, from source: SocketAddress, on link: LinkID) {
        var answers: [ResourceRecord] = []
        for question in message.questions {
            let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
            answers += authority.answers(to: key, on: link).map(\.record.record)
        }
        guard !answers.isEmpty else { return }
        let legacy = { (record: ResourceRecord) -> ResourceRecord in
            var copy = record
            copy.cacheFlush = false
            copy.ttl = min(copy.ttl, MDNSConstants.legacyUnicastTTLMax)
            return copy
        }
        let additionals = AnswerBuilder(authority: authority, link: link).additionals(for: answers).map(legacy)
        let questions = message.questions.map { question -> DNSQuestion in
            var copy = question
            copy.unicastResponse = false
            return copy
        }
        for bytes in AnswerBuilder.pack(answers: answers.map(legacy), additionals: additionals,
                                        limit: payloadLimit(for: link), id: message.id, questions: questions) {
            statistics.responsesSent += 1
            send(bytes, on: link, to: .unicast(source))
        }
    }

    // MARK: - Responses

    private mutating func receiveResponse(_ message: DNSMessage, from source: SocketAddress, on link: LinkID, toUnicast: Bool) {
        // RFC 6762 §6: responses come from port 5353; §11: a unicast response must come from the local link.
        guard source.port == HeraldWire.mdnsPort else { return }
        if toUnicast && !isOnLink(source.address, link: link) { return }
        var changes: [CacheChange] = []
        for record in message.answers + message.additionals {
            checkConflict(record, on: link)
            scheduler.peerAnswered(record, on: link)
            if authority.containsAnywhere(record) { continue }  // our own data: nothing to learn
            changes += caches[link]?.insert(record, from: source.address, at: now,
                                            refreshJitter: random.milliseconds(in: 0...200)) ?? []
            if record.ttl > 0 { unansweredDeadlines.removeAll { $0.link == link && $0.record.key == record.key && $0.record.data == record.data } }
        }
        dispatch(changes, on: link)
    }

    /// True when `address` belongs to one of the link's subnets, or is an IPv6 link-local address.
    func isOnLink(_ address: IPAddress, link: LinkID) -> Bool {
        if case .v6(let v6) = address, v6.isLinkLocal { return true }
        if case .v4(let v4) = address, v4.isLinkLocal { return true }
        return (links[link] ?? []).contains { $0.sharesSubnet(with: address) }
    }

    /// A peer's record with the name, type and class of one of our unique records but other data is a
    /// conflict — unless the data is ours (published on any link), which makes it our own echo.
    private mutating func checkConflict(_ record: ResourceRecord, on link: LinkID) {
        guard record.ttl > 0, !authority.containsAnywhere(record) else { return }
        let key = RecordKey(record)
        for entry in authority.entries(matching: key, on: link) where entry.record.isUnique && entry.record.record.key == key {
            conflict(entry.owner, on: link)
            return
        }
    }

    // MARK: - Sending responses

    /// Sends every scheduled response that is due.
    mutating func sendDueResponses() {
        for response in scheduler.takeDue(at: now) {
            sendResponse(response.answers, on: response.link, to: response.destination, alreadyRateLimited: true)
        }
    }

    private mutating func sendResponse(_ answers: [ResourceRecord], on link: LinkID, to destination: PacketDestination,
                                       alreadyRateLimited: Bool = false) {
        let additionals = AnswerBuilder(authority: authority, link: link).additionals(for: answers)
        if destination == .multicast && !alreadyRateLimited { scheduler.noteMulticast(answers, on: link, at: now) }
        for bytes in AnswerBuilder.pack(answers: answers, additionals: additionals, limit: payloadLimit(for: link)) {
            statistics.responsesSent += 1
            send(bytes, on: link, to: destination)
        }
    }

    // MARK: - Passive observation of failures (RFC 6762 §10.5)

    /// A query our cache could answer, without that answer among its known answers: if two such queries
    /// pass without the record being seen again within ten seconds, the record is presumed gone.
    private mutating func noteUnansweredQuery(_ key: RecordKey, knownAnswers: [ResourceRecord], on link: LinkID) {
        guard var cache = caches[link] else { return }
        for cached in cache.answers(to: key) where !cached.isLocal {
            guard !knownAnswers.contains(where: { $0.hasSameData(as: cached.record) && $0.name == cached.record.name }) else { continue }
            var deadline: Instant?
            cache.update(RecordKey(cached.record), matching: cached.record) { record in
                record.unansweredQueries = record.unansweredQueries &+ 1
                if record.unansweredDeadline == nil { record.unansweredDeadline = now + 10_000 }
                if record.unansweredQueries >= 2 { deadline = record.unansweredDeadline }
            }
            if let deadline, !unansweredDeadlines.contains(where: { $0.link == link && $0.record.key == cached.record.key && $0.record.data == cached.record.data }) {
                unansweredDeadlines.append((link, cached.record, deadline))
            }
        }
        caches[link] = cache
    }

    /// Flushes records whose ten seconds ran out with no answer seen.
    mutating func checkUnansweredQueries() {
        let due = unansweredDeadlines.filter { $0.deadline <= now }
        unansweredDeadlines.removeAll { $0.deadline <= now }
        for item in due {
            let changes = caches[item.link]?.flush(item.record) ?? []
            dispatch(changes, on: item.link)
        }
    }
}
