import HeraldWire

/// Answers waiting to be sent (RFC 6762 §6, §7): each within the time window its question allows, aggregated
/// with other answers when the windows overlap (§6.4), dropped when another responder already gave them (§7.4)
/// or the asker turns out to know them (§7.2), and never multicast more than once a second per link (§6).
struct ResponseScheduler: Sendable {
    /// One answer and what its timing depends on.
    struct Answer: Sendable {
        var record: ResourceRecord
        /// When the question arrived: if the record was multicast since, the asker has it already.
        var askedAt: Instant
        /// Answers defending a name against a probe may follow a multicast of the record after 250 ms, not 1 s.
        var defendsProbe: Bool
    }

    /// A response being assembled for one destination.
    struct Pending: Sendable {
        var link: LinkID
        var destination: PacketDestination
        var sendAt: Instant
        /// Every answer in it may go out no earlier than `notBefore` and, for the sake of aggregation, no later
        /// than `notAfter`.
        var notBefore: Instant
        var notAfter: Instant
        var answers: [Answer]
        /// A querier whose truncated known-answer list may continue in later packets (RFC 6762 §7.2).
        var knownAnswerSource: IPAddress?
    }

    /// When a batch of answers may go out: not before `earliest`, ideally at `preferred`, not after `latest`; once
    /// queued, they may wait `slack` longer still to join answers scheduled later (RFC 6762 §6.4).
    struct Window: Sendable {
        var earliest: Instant
        var preferred: Instant
        var latest: Instant
        var slack: Int

        /// Right now, with no aggregation delay: unique answers (RFC 6762 §6) and probe defences (§8.1).
        static func immediate(_ now: Instant) -> Window { Window(earliest: now, preferred: now, latest: now, slack: 0) }

        /// A random delay in `range` milliseconds, with RFC 6762 §6.4's aggregation slack.
        static func delayed(_ now: Instant, _ range: ClosedRange<Int>, random: inout EngineRandom) -> Window {
            Window(
                earliest: now + range.lowerBound, preferred: now + random.milliseconds(in: range),
                latest: now + range.upperBound, slack: MDNSConstants.aggregationSlack)
        }
    }

    /// When a record was last multicast, and until when that can still matter.
    struct MulticastNote: Sendable {
        var at: Instant
        /// The later of the longest a pending answer waits and a quarter of the record's TTL (the "recently
        /// multicast" test of RFC 6762 §5.4): after it, forgetting the note changes no decision.
        var keepUntil: Instant
    }

    /// The notes of one link. Expired notes are swept out whenever the notes have doubled since the last sweep,
    /// so a responder whose records keep changing (ever-new instance names) holds a bounded number.
    struct LinkNotes: Sendable {
        var notes: [RecordIdentity: MulticastNote] = [:]
        var sweepAt = ResponseScheduler.smallestSweep
    }

    private(set) var pending: [Pending] = []
    /// When each record was last multicast on each link.
    private var lastMulticast: [LinkID: LinkNotes] = [:]

    /// How long a note is kept at least, in milliseconds: longer than any answer stays pending (postponed by the
    /// one-second rule, or held back behind a truncated query's known answers).
    static let shortestNoteLifetime = 10_000
    static let smallestSweep = 256

    /// How many multicast records are remembered, over all links.
    var rememberedMulticasts: Int { lastMulticast.values.reduce(0) { $0 + $1.notes.count } }

    var nextDeadline: Instant? { pending.lazy.map(\.sendAt).min() }

    /// Queues answers asked at `now`. They join a pending response for the same destination whose window overlaps
    /// theirs (moving it within both windows), or start a new one at the window's preferred time.
    mutating func schedule(
        _ records: [ResourceRecord], on link: LinkID, to destination: PacketDestination, within window: Window,
        askedAt now: Instant, knownAnswerSource: IPAddress? = nil, defendsProbe: Bool = false
    ) {
        guard !records.isEmpty else { return }
        let answers = records.map { Answer(record: $0, askedAt: now, defendsProbe: defendsProbe) }
        for index in pending.indices
        where pending[index].link == link && pending[index].destination == destination
            && pending[index].knownAnswerSource == knownAnswerSource
        {
            let entry = pending[index]
            let low = max(entry.notBefore, window.earliest)
            let high = min(entry.notAfter, window.latest)
            guard low <= high else { continue }
            pending[index].sendAt = min(max(entry.sendAt, low), high)
            pending[index].notBefore = low
            pending[index].notAfter = min(entry.notAfter, window.latest + window.slack)
            for answer in answers { Self.add(answer, to: &pending[index].answers) }
            return
        }
        var entry = Pending(
            link: link, destination: destination, sendAt: window.preferred, notBefore: window.earliest,
            notAfter: window.latest + window.slack, answers: [], knownAnswerSource: knownAnswerSource)
        for answer in answers { Self.add(answer, to: &entry.answers) }
        pending.append(entry)
    }

    /// Adds an answer unless the response has it already (then the later question and a defence count).
    private static func add(_ answer: Answer, to answers: inout [Answer]) {
        if let index = answers.firstIndex(where: {
            $0.record.name == answer.record.name && $0.record.hasSameData(as: answer.record)
        }) {
            answers[index].askedAt = max(answers[index].askedAt, answer.askedAt)
            answers[index].defendsProbe = answers[index].defendsProbe || answer.defendsProbe
        } else {
            answers.append(answer)
        }
    }

    /// Multi-packet known-answer suppression (RFC 6762 §7.2): a later packet of a truncated query lists answers the
    /// querier already holds with at least half their TTL; they are dropped from its pending response.
    mutating func suppress(knownAnswers: [ResourceRecord], from source: IPAddress, on link: LinkID) {
        guard !knownAnswers.isEmpty else { return }
        for index in pending.indices where pending[index].link == link && pending[index].knownAnswerSource == source {
            pending[index].answers.removeAll { AnswerBuilder.isSuppressed($0.record, by: knownAnswers) }
        }
        pending.removeAll { $0.answers.isEmpty }
    }

    /// A further truncated packet from the same querier: its response waits until `until` at least, so that there is
    /// a 400–500 ms pause after the last known-answer packet (RFC 6762 §7.2).
    mutating func extendTruncated(from source: IPAddress, on link: LinkID, until: Instant) {
        for index in pending.indices where pending[index].link == link && pending[index].knownAnswerSource == source {
            pending[index].sendAt = max(pending[index].sendAt, until)
            pending[index].notAfter = max(pending[index].notAfter, until)
        }
    }

    /// Duplicate answer suppression (RFC 6762 §7.4): another responder multicast a record we were about to
    /// multicast, with a TTL not less than ours.
    mutating func peerAnswered(_ record: ResourceRecord, on link: LinkID) {
        guard !pending.isEmpty else { return }
        for index in pending.indices where pending[index].link == link && pending[index].destination == .multicast {
            pending[index].answers.removeAll {
                $0.record.name == record.name && $0.record.hasSameData(as: record) && record.ttl >= $0.record.ttl
            }
        }
        pending.removeAll { $0.answers.isEmpty }
    }

    /// When the record last went out by multicast on the link, if it has.
    func lastMulticast(of record: ResourceRecord, on link: LinkID) -> Instant? {
        lastMulticast[link]?.notes[RecordIdentity(record)]?.at
    }

    /// True when the record went out by multicast on the link within `milliseconds` before `now`.
    func wasMulticast(_ record: ResourceRecord, on link: LinkID, within milliseconds: Int, of now: Instant) -> Bool {
        guard let last = lastMulticast(of: record, on: link) else { return false }
        return now - last < milliseconds
    }

    /// Notes records this host multicast itself (announcements, or responses built elsewhere).
    mutating func noteMulticast(_ records: [ResourceRecord], on link: LinkID, at now: Instant) {
        guard !records.isEmpty else { return }
        var entry = lastMulticast.removeValue(forKey: link) ?? LinkNotes()
        for record in records {
            let lifetime = max(Self.shortestNoteLifetime, Int(record.ttl) * 250)
            entry.notes[RecordIdentity(record)] = MulticastNote(at: now, keepUntil: now + lifetime)
        }
        if entry.notes.count >= entry.sweepAt {
            // `filter` builds a new table sized for what is left: the old one's capacity is given back.
            entry.notes = entry.notes.filter { $0.value.keepUntil > now }
            entry.sweepAt = max(Self.smallestSweep, entry.notes.count * 2)
        }
        lastMulticast[link] = entry
    }

    /// Takes every response due at `now`. Multicast answers follow the rate limit (RFC 6762 §6): one multicast
    /// since the question makes the answer unnecessary; one less than a second ago (250 ms for a probe defence)
    /// postpones it until that much time has passed.
    mutating func takeDue(at now: Instant) -> [Pending] {
        var due: [Pending] = []
        var waiting: [Pending] = []
        for entry in pending {
            if entry.sendAt <= now { due.append(entry) } else { waiting.append(entry) }
        }
        pending = waiting
        var result: [Pending] = []
        var postponed: [(Pending, Answer, Instant)] = []
        for var entry in due {
            if entry.destination == .multicast {
                var kept: [Answer] = []
                for answer in entry.answers {
                    guard let last = lastMulticast(of: answer.record, on: entry.link) else {
                        kept.append(answer)
                        continue
                    }
                    if last >= answer.askedAt { continue }  // went out after the question: the asker has it
                    let limit =
                        answer.defendsProbe ? MDNSConstants.probeDefenseRateLimit : MDNSConstants.multicastRateLimit
                    if now - last < limit {
                        postponed.append((entry, answer, last + limit))
                    } else {
                        kept.append(answer)
                    }
                }
                entry.answers = kept
                noteMulticast(kept.map(\.record), on: entry.link, at: now)
            }
            if !entry.answers.isEmpty { result.append(entry) }
        }
        for (entry, answer, at) in postponed {
            schedule(
                [answer.record], on: entry.link, to: entry.destination, within: .immediate(at), askedAt: answer.askedAt,
                knownAnswerSource: entry.knownAnswerSource, defendsProbe: answer.defendsProbe)
        }
        return result
    }

    /// Forgets a link that went away.
    mutating func removeLink(_ link: LinkID) {
        pending.removeAll { $0.link == link }
        lastMulticast[link] = nil
    }

    /// Forgets everything (the engine shuts down).
    mutating func removeAll() {
        pending.removeAll()
        lastMulticast.removeAll()
    }

    /// Drops pending answers of records that are no longer published.
    mutating func withdraw(_ records: [ResourceRecord], on link: LinkID) {
        for index in pending.indices where pending[index].link == link {
            pending[index].answers.removeAll { answer in
                records.contains { $0.name == answer.record.name && $0.hasSameData(as: answer.record) }
            }
        }
        pending.removeAll { $0.answers.isEmpty }
    }
}
