import HeraldWire

/// Asks the questions that operations are interested in (RFC 6762 §5.2, §7): the first query after a
/// short random delay, then back-off, refresh queries for cached answers near the end of their TTL,
/// known answers in every query, duplicate question suppression, and packing into as few packets as
/// the size limit allows.
struct Querier: Sendable {
    private(set) var queries = LinkTable<QuestionTable>()
    /// Per link, an instant no later than the first refresh query due for a cached answer of its questions. It is
    /// made exact whenever refreshes are sent and lowered when a record arrives with an earlier refresh; records
    /// refreshed or removed in between only leave it early, which costs a wake-up with nothing to do, never a
    /// missed refresh. (Scanning every answer of every question for each deadline cost more than the rest of the
    /// engine together.)
    private var refreshBound: [LinkID: Instant] = [:]
    /// How many questions, on all links, ask for ANY type: while there are none, telling whether a record is asked
    /// for takes one lookup, not two (a flood of records nobody asks for each costs it).
    private var anyTypeQuestions = 0
    /// Questions looked at by passes over a link's questions in ``sendDue(at:cache:mtus:askedForUnicast:)``: the work
    /// ticks cost (tests read it).
    private(set) var questionsScanned = 0
    let firstQueryDelay: ClosedRange<Int>
    let sizeLimit: MessageSizeLimit

    /// Whether a first query with nothing cached asks for unicast replies (see `sendDue`).
    let unicastFirstQueries: Bool

    init(firstQueryDelay: ClosedRange<Int>, sizeLimit: MessageSizeLimit, unicastFirstQueries: Bool = true) {
        self.firstQueryDelay = firstQueryDelay
        self.unicastFirstQueries = unicastFirstQueries
        self.sizeLimit = sizeLimit
    }

    /// Adds an operation's interest in a question on a link. A new question is first asked after a random
    /// delay; joining a question already being asked changes nothing on the wire. Answers already cached are
    /// refreshed from now on.
    mutating func subscribe(
        _ operation: OperationID, to key: RecordKey, on link: LinkID, at now: Instant,
        random: inout EngineRandom, cache: RecordCache?
    ) {
        if queries[link]?.modify(key, { $0.subscribers.insert(operation) }) != nil { return }
        let delay = random.milliseconds(in: firstQueryDelay)
        queries[link, default: QuestionTable()][key] = ContinuousQuery(
            key: key, subscriber: operation, firstQueryAt: now + delay,
            earliest: now + firstQueryDelay.lowerBound)
        if key.type == .any { anyTypeQuestions += 1 }
        lowerRefreshBound(to: Self.earliestRefresh(of: key, in: cache), on: link)
    }

    /// Removes an operation's interest; a question nobody wants any more stops being asked.
    mutating func unsubscribe(_ operation: OperationID, from key: RecordKey, on link: LinkID) {
        guard let someLeft = queries[link]?.modify(key, { $0.subscribers.remove(operation) }), !someLeft else {
            return
        }
        queries[link]![key] = nil
        if key.type == .any { anyTypeQuestions -= 1 }
        if queries[link]!.isEmpty {
            queries[link] = nil
            refreshBound[link] = nil
        }
    }

    /// Forgets every question on a link that went away.
    mutating func removeLink(_ link: LinkID) {
        anyTypeQuestions -= queries[link]?.keys.count(where: { $0.type == .any }) ?? 0
        queries[link] = nil
        refreshBound[link] = nil
    }

    /// True when someone asks for a record set on a link (a question for it, or ANY for its name).
    func isAsked(_ key: RecordKey, on link: LinkID) -> Bool {
        guard let asked = queries[link]?.contains(key) else { return false }
        return asked
            || (anyTypeQuestions > 0
                && queries[link]!.contains(RecordKey(name: key.name, type: .any, recordClass: key.recordClass)))
    }

    /// Who wants answers matching a record on a link (questions for its set, or ANY for its name), in order.
    func subscribers(for recordKey: RecordKey, on link: LinkID) -> [OperationID] {
        guard let linkQueries = queries[link] else { return [] }
        let exact = linkQueries[recordKey]?.subscribers
        guard anyTypeQuestions > 0,
            let any = linkQueries[RecordKey(name: recordKey.name, type: .any, recordClass: recordKey.recordClass)]
        else { return exact?.sorted ?? [] }
        return (exact?.asSet ?? []).union(any.subscribers.asSet).sorted()
    }

    /// The earliest instant something may have to be sent: a back-off query or a refresh.
    var nextDeadline: Instant? {
        var earliest: Instant?
        for linkQueries in queries.values where linkQueries.earliestQueryBound < Instant.distantFuture {
            earliest = min(earliest ?? linkQueries.earliestQueryBound, linkQueries.earliestQueryBound)
        }
        for bound in refreshBound.values { earliest = min(earliest ?? bound, bound) }
        return earliest
    }

    /// A record was cached or refreshed on `link`; its first refresh query is due at `refresh`. `isAsked`, when
    /// given, is what ``isAsked(_:on:)`` says of the record's set.
    mutating func noteRefresh(
        at refresh: Instant?, of record: ResourceRecord, on link: LinkID, isAsked asked: Bool? = nil
    ) {
        guard let refresh, asked ?? true, refresh < refreshBound[link] ?? .distantFuture,
            asked ?? isAsked(RecordKey(record), on: link)
        else {
            return
        }
        refreshBound[link] = refresh
    }

    private mutating func lowerRefreshBound(to refresh: Instant?, on link: LinkID) {
        guard let refresh, refresh < refreshBound[link] ?? .distantFuture else { return }
        refreshBound[link] = refresh
    }

    /// The earliest refresh due among the cached answers of a question.
    private static func earliestRefresh(of key: RecordKey, in cache: RecordCache?) -> Instant? {
        var earliest: Instant?
        cache?.forEachAnswer(to: key) { _, cached in
            if let refresh = cached.pointee.nextRefresh { earliest = min(earliest ?? refresh, refresh) }
        }
        return earliest
    }

    /// Sends every question due at `now`, each link's questions packed together with their known answers into
    /// packets that fit the link's MTU (`mtus`; an Ethernet frame for a link missing there).
    ///
    /// The first query of a question that has nothing cached asks for unicast replies (QU, RFC 6762 §5.4): the
    /// querier knows no answers yet, so every answer is news to it alone, and a responder that multicast the
    /// record recently can reply at once, by unicast, instead of after the 20–120 ms that a multicast reply to a
    /// shared record waits. Retransmissions are ordinary (QM) questions. `askedForUnicast` lists the links on
    /// which a QU question went out, so that unicast replies are accepted there.
    mutating func sendDue(
        at now: Instant, cache: inout LinkTable<RecordCache>, mtus: [LinkID: Int],
        askedForUnicast: inout Set<LinkID>
    ) -> [OutgoingPacket] {
        var packets: [OutgoingPacket] = []
        for link in queries.keys.sorted() {
            var questions: [DNSQuestion] = []
            var knownAnswers: [ResourceRecord] = []
            // Only the questions due now, in a stable order (so a seed replays exactly); sorting every question on
            // every tick cost more than everything else the querier does.
            let refreshesDue = refreshBound[link].map { $0 <= now } ?? false
            // Nothing due on the link: no pass over its questions.
            guard refreshesDue || queries[link]!.earliestQueryBound <= now else { continue }
            questionsScanned += queries[link]!.keys.count
            // Questions asked together (an app browsing several types, a resolve's SRV and TXT) share their
            // first query: when one is due, the others whose shortest delay has passed go with it, in one
            // packet, instead of each at its own random instant.
            let firstQueryDue = queries[link]!.values.contains { query in
                query.lastSentAt == nil && query.nextQueryAt.map { $0 <= now } ?? false
            }
            let isDue = { (query: ContinuousQuery) -> Bool in
                if let next = query.nextQueryAt, next <= now { return true }
                return firstQueryDue && query.canJoinFirstQuery(at: now)
            }
            // In wire order, which makes no text: sorting by each key's text cost a tenth of the daemon's CPU when
            // thousands of resolves were running.
            let keys = zip(queries[link]!.keys, queries[link]!.values).compactMap { key, query -> RecordKey? in
                let due =
                    isDue(query)
                    || refreshesDue && (Self.earliestRefresh(of: key, in: cache[link]).map { $0 <= now } ?? false)
                return due ? key : nil
            }.sorted(by: RecordKey.queryOrder)
            for key in keys {
                guard var query = queries[link]![key] else { continue }
                var send = false
                var unicastResponse = false
                if isDue(query) {
                    // RFC 6762 §6.1: the name's owner says it has no record of this type (NSEC). Ask again when that
                    // statement runs out, not at 1, 2, 4 … s (an IPv4-only host's AAAA). The hold counts as a query for
                    // the back-off, so it never asks more often than the schedule would. Joining another question's
                    // first query is no reason to ask either.
                    if query.expectsUniqueAnswer, let end = cache[link]?.standingNegativeAnswerEnd(for: key, at: now) {
                        if let next = query.nextQueryAt, next <= now {
                            query.holdBack(at: now, until: end)
                            queries[link]![key] = query
                        }
                        continue
                    }
                    send = true
                    unicastResponse =
                        unicastFirstQueries && query.lastSentAt == nil
                        && !(cache[link]?.hasAnswer(to: key) ?? false)
                    query.markSent(at: now)
                    if query.expectsUniqueAnswer && (cache[link]?.hasAnswer(to: key) ?? false) {
                        query.nextQueryAt = nil  // answered: refreshes take over
                    }
                }
                // Refreshes due for answers of this question (RFC 6762 §5.2).
                var refreshing: [RecordCache.Handle] = []
                cache[link]?.forEachAnswer(to: key) { handle, cached in
                    if let refresh = cached.pointee.nextRefresh, refresh <= now { refreshing.append(handle) }
                }
                for handle in refreshing {
                    send = true
                    cache[link]?.update(handle) { record in
                        // Skip the refresh points already passed, so a late tick sends one query, not several.
                        repeat { record.refreshesSent += 1 } while record.nextRefresh.map { $0 <= now } ?? false
                    }
                }
                queries[link]![key] = query
                guard send else { continue }
                questions.append(
                    DNSQuestion(
                        name: key.name, type: key.type, recordClass: key.recordClass,
                        unicastResponse: unicastResponse))
                if unicastResponse { askedForUnicast.insert(link) }
                knownAnswers += self.knownAnswers(for: key, in: cache[link], at: now)
            }
            // Every query due has gone out: the bound on the next one becomes exact again.
            queries[link]!.findEarliestQuery()
            if refreshesDue {
                // Every refresh due has gone out: the bound becomes exact again, and later than now.
                refreshBound[link] = nil
                for key in queries[link]!.keys {
                    lowerRefreshBound(to: Self.earliestRefresh(of: key, in: cache[link]), on: link)
                }
            }
            guard !questions.isEmpty else { continue }
            let limit = sizeLimit.sharedPayloadLimit(
                ipv6: link.family == .ipv6, mtu: mtus[link] ?? MessageSizeLimit.ethernetMTU)
            for bytes in QueryPacker.pack(questions: questions, knownAnswers: knownAnswers, limit: limit) {
                packets.append(OutgoingPacket(link: link, destination: .multicast, bytes: bytes))
            }
        }
        return packets
    }

    /// Cached answers worth listing as known (RFC 6762 §7.1: at least half their TTL left), with the TTL left.
    func knownAnswers(for key: RecordKey, in cache: RecordCache?, at now: Instant) -> [ResourceRecord] {
        guard let cache else { return [] }
        var result: [ResourceRecord] = []
        cache.forEachAnswer(to: key) { _, cached in
            guard cached.pointee.isWorthListing(at: now) else { return }
            var record = cached.pointee.record
            record.ttl = cached.pointee.isLocal ? record.ttl : cached.pointee.remainingTTL(at: now)
            record.cacheFlush = false
            result.append(record)
        }
        return result
    }

    /// Duplicate question suppression (RFC 6762 §7.3): a peer's QM question that we were about to ask, whose
    /// known answers are all ones we would list too, counts as our own query. "About to": in the second half of
    /// the wait before our next one, so that it stands in for that query only. Counted whenever it came, a few
    /// one-shot queries from peers would each double the back-off, pushing this host's next query out by minutes.
    mutating func observe(
        peerQuery message: DNSMessage, knownAnswers: KnownAnswers, on link: LinkID, at now: Instant,
        cache: RecordCache?
    ) {
        guard let linkQueries = queries[link] else { return }
        for question in message.questions where !question.unicastResponse {
            let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
            guard var query = linkQueries[key], let next = query.nextQueryAt, next > now else { continue }
            if let last = query.lastSentAt, (next - now) * 2 > next - last { continue }
            // Each of their known answers to the question must be a cached record we would list.
            var unmatched = knownAnswers.isEmpty ? [] : Set(knownAnswers.indices(answering: key))
            cache?.forEachAnswer(to: key) { _, cached in
                guard !unmatched.isEmpty, cached.pointee.isWorthListing(at: now) else { return }
                unmatched.subtract(knownAnswers.positions(of: cached))
            }
            guard unmatched.isEmpty else { continue }
            query.markSent(at: now)
            queries[link]![key] = query
        }
    }

    /// The cache lost an answer to `key` on `link` (expiry, goodbye, flush). A question that had stopped asking
    /// because a unique answer was known starts again, from the beginning of its back-off (RFC 6762 §5.2).
    mutating func answerRemoved(
        _ key: RecordKey, on link: LinkID, cache: RecordCache?, at now: Instant,
        random: inout EngineRandom
    ) {
        for questionKey in [key, RecordKey(name: key.name, type: .any, recordClass: key.recordClass)] {
            guard let query = queries[link]?[questionKey], query.nextQueryAt == nil,
                !(cache?.hasAnswer(to: questionKey) ?? false)
            else { continue }
            let next = now + random.milliseconds(in: firstQueryDelay)
            _ = queries[link]!.modify(questionKey) { query in
                query.interval = MDNSConstants.queryIntervalInitial
                query.nextQueryAt = next
            }
        }
    }
}
