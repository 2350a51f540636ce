import HeraldWire

/// Answers waiting to be sent (RFC 6762 §6, §7): delayed to aggregate and to let known answers arrive,
/// dropped when another responder already gave them, and never multicast more than once a second per link.
struct ResponseScheduler: Sendable {
    struct Pending: Sendable {
        var link: LinkID
        var destination: PacketDestination
        var sendAt: Instant
        var answers: [ResourceRecord]
        /// A querier whose truncated known-answer list may continue in later packets (RFC 6762 §7.2).
        var knownAnswerSource: IPAddress?
        /// Answers defending a name against a probe may go out 250 ms after the last multicast, not 1 s.
        var defendsProbe: Bool
    }

    private(set) var pending: [Pending] = []
    /// When each record was last multicast on each link.
    private var lastMulticast: [LinkID: [RecordIdentity: Instant]] = [:]

    var nextDeadline: Instant? { pending.map(\.sendAt).min() }

    /// Queues answers; multicast answers for a link join a pending multicast response that goes out no later.
    mutating func schedule(_ answers: [ResourceRecord], on link: LinkID, to destination: PacketDestination,
                           at sendAt: Instant, knownAnswerSource: IPAddress? = nil, defendsProbe: Bool = false) {
        guard !answers.isEmpty else { return }
        if let index = pending.firstIndex(where: {
            $0.link == link && $0.destination == destination && $0.knownAnswerSource == knownAnswerSource
        }) {
            var entry = pending[index]
            for answer in answers where !entry.answers.contains(where: { $0.key == answer.key && $0.data == answer.data }) {
                entry.answers.append(answer)
            }
            entry.sendAt = min(entry.sendAt, sendAt)
            entry.defendsProbe = entry.defendsProbe || defendsProbe
            pending[index] = entry
        } else {
            pending.append(Pending(link: link, destination: destination, sendAt: sendAt, answers: answers,
                                   knownAnswerSource: knownAnswerSource, defendsProbe: defendsProbe))
        }
    }

    /// Known-answer suppression for later packets of a truncated query: drops pending answers the querier
    /// already holds with at least half their TTL left.
    mutating func suppress(knownAnswers: [ResourceRecord], from source: IPAddress, on link: LinkID) {
        for index in pending.indices where pending[index].link == link && pending[index].knownAnswerSource == source {
            pending[index].answers.removeAll { answer in
                knownAnswers.contains { $0.hasSameData(as: answer) && $0.name == answer.name && $0.ttl * 2 >= answer.ttl }
            }
        }
    }

    /// Duplicate answer suppression (RFC 6762 §7.4): another responder multicast a record we were about to
    /// multicast, with at least half our TTL.
    mutating func peerAnswered(_ record: ResourceRecord, on link: LinkID) {
        for index in pending.indices where pending[index].link == link && pending[index].destination == .multicast {
            pending[index].answers.removeAll {
                $0.name == record.name && $0.hasSameData(as: record) && record.ttl * 2 >= $0.ttl
            }
        }
    }

    /// True when the record went out by multicast on the link within `milliseconds` before `now`.
    func wasMulticast(_ record: ResourceRecord, on link: LinkID, within milliseconds: Int, of now: Instant) -> Bool {
        guard let last = lastMulticast[link]?[RecordIdentity(record)] else { return false }
        return now - last < milliseconds
    }

    /// Notes records this host multicast itself (announcements, or responses built elsewhere).
    mutating func noteMulticast(_ records: [ResourceRecord], on link: LinkID, at now: Instant) {
        for record in records { lastMulticast[link, default: [:]][RecordIdentity(record)] = now }
    }

    /// Takes every response due at `now`, applying the multicast rate limit (RFC 6762 §6). Returns the
    /// surviving answers per response.
    mutating func takeDue(at now: Instant) -> [Pending] {
        var due: [Pending] = []
        var waiting: [Pending] = []
        for entry in pending {
            if entry.sendAt <= now { due.append(entry) } else { waiting.append(entry) }
        }
        pending = waiting
        var result: [Pending] = []
        for var entry in due {
            if entry.destination == .multicast {
                let window = entry.defendsProbe ? MDNSConstants.probeDefenseRateLimit : MDNSConstants.multicastRateLimit
                entry.answers.removeAll { record in
                    record.ttl > 0 && wasMulticast(record, on: entry.link, within: window, of: now)
                }
                noteMulticast(entry.answers, on: entry.link, at: now)
            }
            if !entry.answers.isEmpty { result.append(entry) }
        }
        return result
    }

    /// Forgets a link that went away.
    mutating func removeLink(_ link: LinkID) {
        pending.removeAll { $0.link == link }
        lastMulticast[link] = nil
    }

    /// Drops pending answers of records that are no longer published.
    mutating func withdraw(_ records: [ResourceRecord], on link: LinkID) {
        for index in pending.indices where pending[index].link == link {
            pending[index].answers.removeAll { answer in records.contains { $0.name == answer.name && $0.hasSameData(as: answer) } }
        }
    }
}
