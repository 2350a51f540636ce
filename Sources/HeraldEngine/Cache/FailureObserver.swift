import HeapModule
import HeraldWire

/// Passive observation of failures (RFC 6762 §10.5): a peer's query that a cached record should answer, without
/// the record in its known-answer list, means the peer has not seen it lately. Two such queries within ten
/// seconds, with no multicast response carrying the record in that time, mean its owner is gone: the record is
/// flushed, without this host asking anything itself.
struct FailureObserver: Sendable {
    private struct Watch: Sendable {
        var record: ResourceRecord
        var firstQuery: Instant
        var queries: Int
    }

    private struct Deadline: Comparable, Sendable {
        var at: Instant
        var link: LinkID
        var identity: RecordIdentity
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
        static func == (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at == rhs.at && lhs.link == rhs.link && lhs.identity == rhs.identity }
    }

    private var watches: [LinkID: [RecordIdentity: Watch]] = [:]
    private var deadlines = Heap<Deadline>()

    /// The end of the earliest observation window.
    var nextDeadline: Instant? { deadlines.min?.at }

    /// A peer asked `key` on `link`, listing `knownAnswers`: every remote cached record that answers it and is not
    /// among them is watched.
    mutating func queryObserved(_ key: RecordKey, knownAnswers: [ResourceRecord], cache: RecordCache?, on link: LinkID,
                                at now: Instant) {
        guard let cache else { return }
        for cached in cache.answers(to: key) where !cached.isLocal {
            let record = cached.record
            if knownAnswers.contains(where: { $0.name == record.name && $0.hasSameData(as: record) }) { continue }
            let identity = RecordIdentity(record)
            if var watch = watches[link]?[identity], now - watch.firstQuery < MDNSConstants.failureObservationWindow {
                watch.queries += 1
                watches[link]![identity] = watch
            } else {
                watches[link, default: [:]][identity] = Watch(record: record, firstQuery: now, queries: 1)
                deadlines.insert(Deadline(at: now + MDNSConstants.failureObservationWindow, link: link, identity: identity))
            }
        }
    }

    /// A multicast response carried the record: whoever asked got their answer.
    mutating func answerSeen(_ record: ResourceRecord, on link: LinkID) {
        watches[link]?[RecordIdentity(record)] = nil
    }

    /// The records whose window ended at or before `now` after two or more unanswered queries; every ended
    /// window is forgotten.
    mutating func takeFailed(at now: Instant) -> [(link: LinkID, record: ResourceRecord)] {
        var failed: [(link: LinkID, record: ResourceRecord)] = []
        while let first = deadlines.min, first.at <= now {
            _ = deadlines.removeMin()
            guard let watch = watches[first.link]?[first.identity],
                  watch.firstQuery + MDNSConstants.failureObservationWindow == first.at else { continue }  // stale
            watches[first.link]![first.identity] = nil
            if watch.queries >= MDNSConstants.failureObservationQueries { failed.append((first.link, watch.record)) }
        }
        return failed
    }

    /// Forgets a link that went away.
    mutating func removeLink(_ link: LinkID) { watches[link] = nil }

    /// Forgets everything.
    mutating func removeAll() {
        watches.removeAll()
        deadlines = Heap()
    }
}
