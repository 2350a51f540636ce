import HeapModule
import HeraldWire

/// Passive observation of failures (RFC 6762 §10.5): a peer's query that a cached record should answer, without
/// the record in its known-answer list, means the peer has not seen it lately. Two such queries within ten
/// seconds, with no multicast response carrying the record in that time, mean its owner is gone: the record is
/// flushed, without this host asking anything itself.
///
/// Records are watched by their cache handle: a record that leaves the cache ends its watch with it.
struct FailureObserver: Sendable {
    private struct Watch: Sendable {
        var firstQuery: Instant
        var queries: Int
    }

    /// A record on a link.
    private struct Watched: Hashable, Sendable {
        var link: LinkID
        var record: RecordCache.Handle
    }

    private struct Deadline: Comparable, Sendable {
        var at: Instant
        var watched: Watched
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
    }

    private var watches: [Watched: Watch] = [:]
    private var deadlines = Heap<Deadline>()

    /// The end of the earliest observation window.
    var nextDeadline: Instant? { deadlines.min?.at }

    /// True when some record is being watched (so answers seen may end a watch).
    var isWatching: Bool { !watches.isEmpty }

    /// A peer asked `key` on `link`, listing `knownAnswers`: every remote cached record
    /// that answers it and is not among them is watched. `counted` holds the records this query already counted for
    /// (another of its questions asked for them too).
    mutating func queryObserved(
        _ key: RecordKey, knownAnswers: KnownAnswers, cache: RecordCache?, on link: LinkID,
        at now: Instant, counted: inout Set<RecordCache.Handle>
    ) {
        guard let cache else { return }
        cache.forEachAnswer(to: key) { handle, cached in
            guard !cached.pointee.isLocal, !knownAnswers.contains(cached), counted.insert(handle).inserted else {
                return
            }
            let watched = Watched(link: link, record: handle)
            if Self.count(&watches[watched], at: now) {
                deadlines.insert(Deadline(at: now + MDNSConstants.failureObservationWindow, watched: watched))
            }
        }
    }

    /// Counts one more unanswered query in a watch, or starts a new one (returning true) when there is none or its
    /// window has ended.
    private static func count(_ watch: inout Watch?, at now: Instant) -> Bool {
        if let current = watch, now - current.firstQuery < MDNSConstants.failureObservationWindow {
            watch!.queries = current.queries + 1
            return false
        }
        watch = Watch(firstQuery: now, queries: 1)
        return true
    }

    /// An app asked to reconfirm a record (RFC 6762 §10.4): it is flushed when the window ends, as if two queries
    /// had gone unanswered, unless a response carrying it is seen first. Returns false, changing nothing, when the
    /// record is already due to be flushed (reconfirmed already, or two peers' queries went unanswered): asking
    /// again neither postpones the flush nor needs more queries.
    mutating func reconfirm(_ record: RecordCache.Handle, on link: LinkID, at now: Instant) -> Bool {
        let watched = Watched(link: link, record: record)
        if let current = watches[watched], now - current.firstQuery < MDNSConstants.failureObservationWindow,
            current.queries >= MDNSConstants.failureObservationQueries
        {
            return false
        }
        watches[watched] = Watch(firstQuery: now, queries: MDNSConstants.failureObservationQueries)
        deadlines.insert(Deadline(at: now + MDNSConstants.failureObservationWindow, watched: watched))
        return true
    }

    /// A multicast response carried the record: whoever asked got their answer.
    mutating func answerSeen(_ record: RecordCache.Handle, on link: LinkID) {
        guard isWatching else { return }
        watches[Watched(link: link, record: record)] = nil
    }

    /// The records whose window ended at or before `now` after two or more unanswered queries; every ended
    /// window is forgotten.
    mutating func takeFailed(at now: Instant) -> [(link: LinkID, record: RecordCache.Handle)] {
        var failed: [(link: LinkID, record: RecordCache.Handle)] = []
        while let first = deadlines.min, first.at <= now {
            _ = deadlines.removeMin()
            guard let watch = watches[first.watched],
                watch.firstQuery + MDNSConstants.failureObservationWindow == first.at
            else { continue }  // stale
            watches[first.watched] = nil
            if watch.queries >= MDNSConstants.failureObservationQueries {
                failed.append((first.watched.link, first.watched.record))
            }
        }
        return failed
    }

    /// Forgets a link that went away.
    mutating func removeLink(_ link: LinkID) { watches = watches.filter { $0.key.link != link } }

    /// Forgets everything.
    mutating func removeAll() {
        watches.removeAll()
        deadlines = Heap()
    }
}
