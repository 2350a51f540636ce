import HeraldWire

/// Asks the questions that operations are interested in (RFC 6762 §5.2, §7): the first query after a
/// short random delay, then back-off, refresh queries for cached answers near the end of their TTL,
/// known answers in every query, duplicate question suppression, and packing into as few packets as
/// the size limit allows.
struct Querier: Sendable {
    private(set) var queries: [LinkID: [RecordKey: ContinuousQuery]] = [:]
    let firstQueryDelay: ClosedRange<Int>
    let sizeLimit: MessageSizeLimit

    init(firstQueryDelay: ClosedRange<Int>, sizeLimit: MessageSizeLimit) {
        self.firstQueryDelay = firstQueryDelay
        self.sizeLimit = sizeLimit
    }

    /// Adds an operation's interest in a question on a link. A new question is first asked after a random
    /// delay; joining a question already being asked changes nothing on the wire.
    mutating func subscribe(_ operation: OperationID, to key: RecordKey, on link: LinkID, at now: Instant,
                            random: inout EngineRandom) {
        if queries[link, default: [:]][key] == nil {
            let delay = random.milliseconds(in: firstQueryDelay)
            queries[link, default: [:]][key] = ContinuousQuery(key: key, link: link, firstQueryAt: now + delay)
        }
        queries[link]![key]!.subscribers.insert(operation)
    }

    /// Removes an operation's interest; a question nobody wants any more stops being asked.
    mutating func unsubscribe(_ operation: OperationID, from key: RecordKey, on link: LinkID) {
        guard var query = queries[link]?[key] else { return }
        query.subscribers.remove(operation)
        queries[link]![key] = query.subscribers.isEmpty ? nil : query
        if queries[link]!.isEmpty { queries[link] = nil }
    }

    /// Forgets every question on a link that went away.
    mutating func removeLink(_ link: LinkID) { queries[link] = nil }

    /// The questions someone is asking on a link.
    func wantedKeys(on link: LinkID) -> Set<RecordKey> { queries[link].map { Set($0.keys) } ?? [] }

    /// Who wants answers matching a record on a link (questions for its set, or ANY for its name).
    func subscribers(for recordKey: RecordKey, on link: LinkID) -> Set<OperationID> {
        guard let linkQueries = queries[link] else { return [] }
        var result = linkQueries[recordKey]?.subscribers ?? []
        if let any = linkQueries[RecordKey(name: recordKey.name, type: .any, recordClass: recordKey.recordClass)] {
            result.formUnion(any.subscribers)
        }
        return result
    }

    /// The earliest instant something must be sent: a back-off query or a refresh.
    func nextDeadline(cache: [LinkID: RecordCache]) -> Instant? {
        var earliest: Instant?
        for (link, linkQueries) in queries {
            for query in linkQueries.values {
                if let due = dueTime(of: query, cache: cache[link]) { earliest = min(earliest ?? due, due) }
            }
        }
        return earliest
    }

    /// When `query` next needs to go out: its back-off time, or the earliest refresh of one of its answers.
    private func dueTime(of query: ContinuousQuery, cache: RecordCache?) -> Instant? {
        var due = query.nextQueryAt
        if let cache {
            for cached in cache.answers(to: query.key) {
                if let refresh = cached.nextRefresh { due = min(due ?? refresh, refresh) }
            }
        }
        return due
    }

    /// Sends every question due at `now`, each link's questions packed together with their known answers.
    mutating func sendDue(at now: Instant, cache: inout [LinkID: RecordCache]) -> [OutgoingPacket] {
        var packets: [OutgoingPacket] = []
        for link in queries.keys.sorted() {
            var questions: [DNSQuestion] = []
            var knownAnswers: [ResourceRecord] = []
            // Only the questions due now, in a stable order (so a seed replays exactly); sorting every question on
            // every tick cost more than everything else the querier does.
            let keys = queries[link]!.values.filter { query in dueTime(of: query, cache: cache[link]).map { $0 <= now } ?? false }
                .map(\.key).sorted { $0.description < $1.description }
            for key in keys {
                guard var query = queries[link]![key] else { continue }
                var send = false
                if let next = query.nextQueryAt, next <= now {
                    send = true
                    query.markSent(at: now)
                    if query.expectsUniqueAnswer && !(cache[link]?.answers(to: key).isEmpty ?? true) {
                        query.nextQueryAt = nil  // answered: refreshes take over
                    }
                }
                // Refreshes due for answers of this question (RFC 6762 §5.2).
                for cached in cache[link]?.answers(to: key) ?? [] {
                    guard let refresh = cached.nextRefresh, refresh <= now else { continue }
                    send = true
                    cache[link]?.update(RecordKey(cached.record), matching: cached.record) { record in
                        // Skip the refresh points already passed, so a late tick sends one query, not several.
                        repeat { record.refreshesSent += 1 } while (record.nextRefresh.map { $0 <= now } ?? false)
                    }
                }
                queries[link]![key] = query
                guard send else { continue }
                questions.append(DNSQuestion(name: key.name, type: key.type, recordClass: key.recordClass))
                knownAnswers += self.knownAnswers(for: key, in: cache[link], at: now)
            }
            guard !questions.isEmpty else { continue }
            for bytes in QueryPacker.pack(questions: questions, knownAnswers: knownAnswers, limit: sizeLimit.payloadLimit(ipv6: link.family == .ipv6)) {
                packets.append(OutgoingPacket(link: link, destination: .multicast, bytes: bytes))
            }
        }
        return packets
    }

    /// Cached answers worth listing as known (RFC 6762 §7.1: at least half their TTL left), with the TTL left.
    func knownAnswers(for key: RecordKey, in cache: RecordCache?, at now: Instant) -> [ResourceRecord] {
        guard let cache else { return [] }
        var result: [ResourceRecord] = []
        for cached in cache.answers(to: key) where cached.remaining(at: now) * 2 >= Int(cached.record.ttl) * 1000 {
            var record = cached.record
            record.ttl = cached.isLocal ? record.ttl : cached.remainingTTL(at: now)
            record.cacheFlush = false
            result.append(record)
        }
        return result
    }

    /// Duplicate question suppression (RFC 6762 §7.3): a peer's QM question that we were about to ask, whose
    /// known answers are all ones we would list too, counts as our own query.
    mutating func observe(peerQuery message: DNSMessage, on link: LinkID, at now: Instant, cache: RecordCache?) {
        guard queries[link] != nil else { return }
        for question in message.questions where !question.unicastResponse {
            let key = RecordKey(name: question.name, type: question.type, recordClass: question.recordClass)
            guard var query = queries[link]![key], let next = query.nextQueryAt, next > now else { continue }
            let ours = knownAnswers(for: key, in: cache, at: now)
            let theirs = message.answers.filter { RecordKey($0).isAnswered(byQuestionFor: key) }
            guard theirs.allSatisfy({ answer in ours.contains { $0.hasSameData(as: answer) } }) else { continue }
            query.markSent(at: now)
            queries[link]![key] = query
        }
    }

    /// The cache lost an answer to `key` on `link` (expiry, goodbye, flush). A question that had stopped asking
    /// because a unique answer was known starts again, from the beginning of its back-off (RFC 6762 §5.2).
    mutating func answerRemoved(_ key: RecordKey, on link: LinkID, cache: RecordCache?, at now: Instant,
                                random: inout EngineRandom) {
        for questionKey in [key, RecordKey(name: key.name, type: .any, recordClass: key.recordClass)] {
            guard let query = queries[link]?[questionKey], query.nextQueryAt == nil,
                  cache?.answers(to: questionKey).isEmpty ?? true else { continue }
            queries[link]![questionKey]!.interval = MDNSConstants.queryIntervalInitial
            queries[link]![questionKey]!.nextQueryAt = now + random.milliseconds(in: firstQueryDelay)
        }
    }
}
