import HeraldWire

/// Incoming packets: queries are answered (RFC 6762 §6, §7), probes tie-broken or defended (§8),
/// responses checked for conflicts (§9) and cached (§10). The rules live with their concepts
/// (``AnswerBuilder``, ``ResponseScheduler``, ``ProbeTieBreak``, conflict detection, ``RecordCache``,
/// ``FailureObserver``); this file only routes.
extension MDNSEngine {
    /// Handles a datagram that arrived on `link` from `source`. `toUnicast` is true when it was sent to this
    /// host's own address rather than the mDNS group.
    package mutating func receive(
        _ bytes: [UInt8], from source: SocketAddress, on link: LinkID, toUnicast: Bool = false,
        at time: Instant
    ) {
        now = max(now, time)
        guard links[link] != nil, !isShutDown else { return }
        statistics.packetsReceived += 1
        // The parser reads a TTL with its top bit set as 0 (RFC 2181 §8): in a response such a record is a goodbye.
        let message: DNSMessage
        do {
            message = try DNSMessage(parsing: bytes)
        } catch {
            statistics.malformedPackets += 1
            return
        }
        // RFC 6762 §18.3, §18.11: other opcodes and non-zero response codes are ignored.
        guard message.flags.opcode == 0, message.flags.responseCode == 0 else { return }
        // Our own multicast, heard again through another interface on the same link.
        if source.port == HeraldWire.mdnsPort && isOwnAddress(source.address) { return }
        if message.isResponse {
            receiveResponse(message, from: source, on: link, toUnicast: toUnicast)
        } else {
            receiveQuery(message, from: source, on: link, toUnicast: toUnicast)
        }
    }

    // MARK: - Queries

    private mutating func receiveQuery(
        _ received: DNSMessage, from source: SocketAddress, on link: LinkID, toUnicast: Bool
    ) {
        // A question asked twice in one packet is asked once: a packet repeating one a thousand times must not cost a
        // thousand walks of its answers.
        var message = received
        if message.questions.count > 1 {
            var seen = Set<DNSQuestion>()
            message.questions = message.questions.filter { seen.insert($0).inserted }
        }
        // RFC 6762 §5.5, §11: a query sent to our own address may come from anywhere; only the link's are answered
        // (a legacy query's too: off the link it would read out every record, and a forged source would turn a
        // small query into a large reply to someone else).
        if toUnicast && !isOnLink(source.address, link: link) { return }
        if source.port != HeraldWire.mdnsPort {
            answerLegacyQuery(message, from: source, on: link)
            return
        }
        let cache = caches[link]
        let known = KnownAnswers(message.answers)
        // A truncated query's known answers go on in later packets: from its first one, neither duplicate-question
        // suppression (§7.3) nor passive failure observation (§10.5) can tell what the asker already knows.
        let knownAnswersComplete = !message.flags.isTruncated
        if !toUnicast && knownAnswersComplete {
            querier.observe(peerQuery: message, knownAnswers: known, on: link, at: now, cache: cache)
        }
        // Later packets of a truncated query (RFC 6762 §7.2).
        scheduler.suppress(knownAnswers: message.answers, from: source.address, on: link)
        if message.flags.isTruncated && message.questions.isEmpty {
            scheduler.extendTruncated(from: source.address, on: link, until: now + truncatedDelay())
        }
        // RFC 6762 §10.5 counts queries whose answers would come by multicast, where this host would hear them: not
        // one sent to an address of ours, nor a QU question (answered by unicast when recently multicast).
        // One packet is one query for each record, however many of its questions the record answers (A and ANY).
        if let cache, !toUnicast, knownAnswersComplete {
            var counted: Set<RecordCache.Handle> = []
            for question in message.questions where !question.unicastResponse {
                let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
                failureObserver.queryObserved(
                    key, knownAnswers: known, cache: cache, on: link, at: now, counted: &counted)
            }
        }
        let probedNames = handleProbes(message, on: link)

        let builder = AnswerBuilder(authority: authority, link: link)
        // RFC 6762 §11: an asker outside the link's subnets would drop a unicast reply; it gets multicast instead.
        let askerOnLink = toUnicast || isOnLink(source.address, link: link)
        let reply = builder.reply(
            to: message, skipping: probedNames, wantsUnicast: toUnicast, askerOnLink: askerOnLink,
            scheduler: scheduler, at: now)
        guard !reply.isEmpty else { return }
        let window: ResponseScheduler.Window
        if message.flags.isTruncated {
            window = .delayed(
                now, MDNSConstants.truncatedQueryDelayMin...MDNSConstants.truncatedQueryDelayMax, random: &random)
        } else if reply.isImmediate {
            window = .immediate(now)
        } else {
            window = .delayed(
                now, MDNSConstants.sharedAnswerDelayMin...MDNSConstants.sharedAnswerDelayMax, random: &random)
        }
        let knownAnswerSource = message.flags.isTruncated ? source.address : nil
        scheduler.schedule(
            reply.unicast, on: link, to: .unicast(source), within: window, askedAt: now,
            knownAnswerSource: knownAnswerSource)
        scheduler.schedule(
            reply.multicast, on: link, to: .multicast, within: window, askedAt: now,
            knownAnswerSource: knownAnswerSource)
        sendDueResponses()
    }

    /// RFC 6762 §7.2: 400–500 ms for the rest of a truncated known-answer list to arrive.
    private mutating func truncatedDelay() -> Int {
        random.milliseconds(in: MDNSConstants.truncatedQueryDelayMin...MDNSConstants.truncatedQueryDelayMax)
    }

    /// Probe handling (RFC 6762 §8.2, §9): a probe for a name we are probing is tie-broken; a probe for a
    /// name we have announced is answered at once. Our own probes, echoed back, are neither. Returns the names
    /// handled here.
    private mutating func handleProbes(_ message: DNSMessage, on link: LinkID) -> Set<DNSName> {
        guard !message.authorities.isEmpty else { return [] }
        var handled = Set<DNSName>()
        for question in message.questions {
            let theirs = message.authorities.filter { $0.name == question.name }
            guard !theirs.isEmpty else { continue }
            let isOwnEcho = theirs.allSatisfy { authority.containsAnywhere($0) }
            for id in publications.keys.sorted() {
                guard let publication = publications[id], let phase = publication.phases[link] else { continue }
                let ours = publication.uniqueRecords(on: link).map(\.record).filter { $0.name == question.name }
                guard !ours.isEmpty else { continue }
                handled.insert(question.name)
                guard !isOwnEcho else { continue }
                // A probe for a known-unique name (our reverse PTR) is no contest: it is answered once announced.
                let contested = publication.probedRecords(on: link).contains { $0.record.name == question.name }
                if phase.isProbing {
                    guard contested else { continue }
                    if ProbeTieBreak.compare(ours: ours, theirs: theirs) == .weLose { lostTieBreak(id, on: link) }
                } else {
                    // Defend our name at once; the rate limit allows a defence every 250 ms (RFC 6762 §6, §8.1).
                    scheduler.schedule(
                        ours, on: link, to: .multicast, within: .immediate(now), askedAt: now, defendsProbe: true)
                }
            }
        }
        if !handled.isEmpty { sendDueResponses() }
        return handled
    }

    /// Legacy unicast (RFC 6762 §6.7): a one-shot resolver on another port gets a conventional unicast
    /// reply echoing its ID and question, TTLs capped at 10 s, no cache-flush bits, and names in SRV and NSEC
    /// record data written out in full, as unicast DNS clients expect them (RFC 2782, RFC 4034 §4.1.1).
    private mutating func answerLegacyQuery(_ message: DNSMessage, from source: SocketAddress, on link: LinkID) {
        let builder = AnswerBuilder(authority: authority, link: link)
        let reply = builder.reply(to: message, skipping: [], wantsUnicast: false, scheduler: scheduler, at: now)
        let answers = reply.multicast + reply.unicast
        guard !answers.isEmpty else { return }
        let legacy = { (record: ResourceRecord) -> ResourceRecord in
            var copy = record
            copy.cacheFlush = false
            copy.ttl = min(copy.ttl, MDNSConstants.legacyUnicastTTLMax)
            return copy
        }
        let additionals = builder.additionals(for: answers).map(legacy)
        let questions = message.questions.map { question -> DNSQuestion in
            var copy = question
            copy.unicastResponse = false
            return copy
        }
        for bytes in AnswerBuilder.pack(
            answers: answers.map(legacy), additionals: additionals,
            room: messageRoom(for: link), id: message.id, questions: questions,
            recordDataCompression: .unicastDNS)
        {
            statistics.responsesSent += 1
            send(bytes, on: link, to: .unicast(source))
        }
    }

    // MARK: - Responses

    private mutating func receiveResponse(
        _ message: DNSMessage, from source: SocketAddress, on link: LinkID, toUnicast: Bool
    ) {
        // RFC 6762 §6: responses come from port 5353; a unicast one must answer a QU question we asked within the
        // last two seconds, and (§11) come from the local link.
        guard source.port == HeraldWire.mdnsPort else { return }
        if toUnicast {
            guard isOnLink(source.address, link: link), let asked = lastUnicastQuestion[link],
                now - asked <= MDNSConstants.unicastResponseWindow
            else { return }
            statistics.unicastResponsesReceived += 1
        }
        var changes: [CacheChange] = []
        // NSEC records of names whose negative answers queries report: a refresh changes no cache entry but may
        // change its TTL, so these are looked at again too.
        var negativeNames: [DNSName] = []
        for section in [message.answers, message.authorities, message.additionals] {
            for record in section {
                receiveRecord(record, from: source, on: link, toUnicast: toUnicast, changes: &changes)
                if record.type == .nsec, negativeAnswerWatchers[record.name] != nil {
                    negativeNames.append(record.name)
                }
            }
        }
        dispatch(changes, on: link, negativeNames: negativeNames)
        sendDueResponses()
    }

    /// One record of a response: our own data is checked for understated TTLs, a conflicting one is handled, any
    /// other is cached. A multicast one answers whatever peers were waiting for (RFC 6762 §7.4, §10.5).
    private mutating func receiveRecord(
        _ record: ResourceRecord, from source: SocketAddress, on link: LinkID,
        toUnicast: Bool, changes: inout [CacheChange]
    ) {
        if !toUnicast { scheduler.peerAnswered(record, on: link) }
        let seenByPeers = !toUnicast && record.ttl > 0
        // One lookup settles nearly every record a peer sends: at a name this host has no records of, a record is
        // neither its own nor in conflict with its own.
        let atOwnName = authority.hasRecords(named: record.name)
        if atOwnName && authority.containsAnywhere(record) {
            // Our own data from elsewhere: a cooperating responder, our other interface, a reflector. If it
            // carries less than half our TTL, peers' caches need ours again (RFC 6762 §6.6).
            if seenByPeers { noteAnswerSeen(record, on: link) }
            refreshIfUnderstated(record, on: link)
            // A unique record is an echo of ours. A shared one is the peer's too: kept aside while our copy is cached
            // here, else cached like any peer's (we publish it on another link only, or have not announced it yet).
            if record.cacheFlush { return }
            if caches[link]?.notePeerCopy(
                record, at: now,
                refreshJitter: random.milliseconds(in: 0...200)) ?? true
            {
                return
            }
        }
        // A record that conflicts with ours is not cached: if the other host keeps the name, it says so again
        // after we rename; if we keep it, its data was wrong.
        if atOwnName && hasConflict(record, on: link) {
            if seenByPeers { noteAnswerSeen(record, on: link) }
            return
        }
        let questions = querier
        let watchers = negativeAnswerWatchers
        // Wanted, so not evicted for junk: answers to questions, and NSEC records of names whose negative answers
        // queries report (an evicted one would leave its negative answer standing).
        let isWanted = { (key: RecordKey) in
            questions.isAsked(key, on: link) || (key.type == .nsec && watchers[key.name] != nil)
        }
        let isAsked = questions.isAsked(RecordKey(record), on: link)
        let reported = changes.count
        let cached = caches[link]?.insert(
            record, at: now, refreshJitter: random.milliseconds(in: 0...200),
            isWanted: isWanted, isNewcomerWanted: isAsked || (record.type == .nsec && watchers[record.name] != nil),
            changes: &changes)
        // A record nobody asks for has nobody to tell that it arrived (its NSEC watchers, if any, hear of it through
        // the response's negative names): its change is not dispatched, which spares a flood's junk a lookup each.
        if !isAsked { changes.removeLast(changes.count - reported) }
        guard let cached else { return }
        if seenByPeers { failureObserver.answerSeen(cached.handle, on: link) }
        querier.noteRefresh(at: cached.nextRefresh, of: record, on: link, isAsked: isAsked)
    }

    /// A multicast response carried a record that was not cached just now: a watch on its cached copy ends.
    private mutating func noteAnswerSeen(_ record: ResourceRecord, on link: LinkID) {
        guard failureObserver.isWatching, let handle = caches[link]?.handle(of: record) else { return }
        failureObserver.answerSeen(handle, on: link)
    }

    /// True when `address` belongs to one of the link's subnets, or is a link-local address.
    func isOnLink(_ address: IPAddress, link: LinkID) -> Bool {
        if case .v6(let v6) = address, v6.isLinkLocal { return true }
        if case .v4(let v4) = address, v4.isLinkLocal { return true }
        return (links[link] ?? []).contains { $0.sharesSubnet(with: address) }
    }

    /// Handles a peer's record that conflicts with one of our publications on the link (RFC 6762 §8.1, §9);
    /// returns true if it did.
    private mutating func hasConflict(_ record: ResourceRecord, on link: LinkID) -> Bool {
        // Only a record at a name this host publishes on the link can conflict (RFC 6762 §9): one lookup settles
        // nearly every record a peer sends, before any publication is looked at.
        guard authority.hasRecords(named: record.name, on: link),
            publications.values.contains(where: { $0.isConflicted(by: record, on: link) })
        else { return false }
        var found = false
        for id in publications.keys.sorted() where publications[id]?.isConflicted(by: record, on: link) ?? false {
            conflict(id, on: link)
            found = true
        }
        return found
    }

    /// RFC 6762 §6.6: another responder gave one of our records with less than half its TTL (a goodbye included):
    /// we multicast it again, so that caches keep it.
    private mutating func refreshIfUnderstated(_ record: ResourceRecord, on link: LinkID) {
        let ours = authority.records(answering: RecordKey(record), on: link).map(\.record)
            .filter { $0.hasSameData(as: record) && UInt64(record.ttl) * 2 < UInt64($0.ttl) }
        guard !ours.isEmpty else { return }
        scheduler.schedule(
            ours, on: link, to: .multicast,
            within: .delayed(
                now, MDNSConstants.sharedAnswerDelayMin...MDNSConstants.sharedAnswerDelayMax,
                random: &random),
            askedAt: now)
    }

    // MARK: - Sending responses

    /// Sends every scheduled response that is due.
    mutating func sendDueResponses() {
        for response in scheduler.takeDue(at: now) {
            let answers = response.answers.map(\.record)
            let additionals = AnswerBuilder(authority: authority, link: response.link).additionals(for: answers)
            for bytes in AnswerBuilder.pack(
                answers: answers, additionals: additionals, room: messageRoom(for: response.link))
            {
                statistics.responsesSent += 1
                send(bytes, on: response.link, to: response.destination)
            }
        }
    }

    // MARK: - Passive observation of failures (RFC 6762 §10.5)

    /// Flushes cached records whose owners stopped answering the queries others send.
    mutating func flushFailedRecords() {
        for failed in failureObserver.takeFailed(at: now) {
            let changes = caches[failed.link]?.flush(failed.record) ?? []
            dispatch(changes, on: failed.link)
        }
    }
}
