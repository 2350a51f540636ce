/// Timing and TTL constants of RFC 6762, named after the rule that sets them. Durations are in
/// milliseconds of the engine's (virtual) clock.
package enum MDNSConstants {
    /// RFC 6762 §8.1: wait a random 0–250 ms before the first probe.
    package static let probeInitialDelayMax = 250
    /// The random wait before the first probe of a registration a client asks for on a settled link. §8.1's
    /// 0–250 ms guards against hosts probing in step after an event they all saw (power restored, a link coming
    /// up); a client's request is no such event. The spread is the one §5.2 gives a querier's first query.
    package static let requestedProbeDelayMin = 20
    package static let requestedProbeDelayMax = 120
    /// How long after a link comes up, its interface's addresses change or a conflict renames the host, new
    /// registrations on it still wait the full 0–250 ms: long enough to cover the host's own probing and the
    /// services started (or renamed) with it.
    package static let linkSettleTime = 2000
    /// RFC 6762 §8.1: probes are sent 250 ms apart.
    package static let probeInterval = 250
    /// RFC 6762 §8.1: three probes.
    package static let probeCount = 3
    /// RFC 6762 §8.2: the loser of a simultaneous probe tie-break waits one second.
    package static let probeTieBreakDelay = 1000
    /// RFC 6762 §8.1: after 15 conflicts in 10 s, probe no more than once every 5 s.
    package static let conflictRateLimitCount = 15
    package static let conflictRateWindow = 10_000
    package static let conflictRateLimitedInterval = 5000
    /// RFC 6762 §8.3: at least two announcements (up to eight), one second apart, then doubling. Three survive the
    /// loss of any one packet and show the doubling: 0 s, 1 s, 3 s.
    package static let announcementCount = 3
    package static let announcementInterval = 1000
    /// RFC 6762 §6: shared answers are delayed 20–120 ms.
    package static let sharedAnswerDelayMin = 20
    package static let sharedAnswerDelayMax = 120
    /// RFC 6762 §7.2: a query with TC set is answered after 400–500 ms.
    package static let truncatedQueryDelayMin = 400
    package static let truncatedQueryDelayMax = 500
    /// RFC 6762 §6.4: an answer may wait up to 500 ms longer than its own delay to share a packet with later ones.
    package static let aggregationSlack = 500
    /// RFC 6762 §6: unicast responses are accepted only for a query that asked for them within the last two seconds.
    package static let unicastResponseWindow = 2000
    /// RFC 6762 §6: a record is multicast at most once per second per interface (250 ms to defend a probe).
    package static let multicastRateLimit = 1000
    package static let probeDefenseRateLimit = 250
    /// RFC 6762 §5.2: the first query of a continuous query waits 20–120 ms; intervals then start at
    /// one second, at least double, and are capped at 60 minutes.
    package static let firstQueryDelayMin = 20
    package static let firstQueryDelayMax = 120
    package static let queryIntervalInitial = 1000
    package static let queryIntervalMax = 3_600_000
    /// RFC 6762 §10.2: records older than one second are flushed by a cache-flush record.
    package static let cacheFlushGrace = 1000
    /// RFC 6762 §10.5: two queries for a cached record without an answer within ten seconds flush it.
    package static let failureObservationWindow = 10_000
    package static let failureObservationQueries = 2
    /// The wait between the two queries that reconfirm a record (RFC 6762 §10.4).
    package static let reconfirmQueryGap = 2_000
    /// At most this many reconfirmation queries wait to be sent; more requests find the queue full.
    package static let reconfirmQueriesPending = 1024
    /// How many records closest to expiry a full cache looks at for one to evict (so a cache full of records
    /// people ask for costs a bounded amount of work per newcomer, not a pass over everything).
    package static let evictionCandidates = 256
    /// A full cache takes in at most its limit divided by this, per second, of records nobody asks for in the place
    /// of others nobody asks for (``EvictionBudget``): beyond that a flood of junk costs a lookup per record, not an
    /// eviction. Records an operation asks for are never held to it.
    package static let unwantedEvictionsPerSecondDivisor = 4
    /// RFC 6762 §10.1: a goodbye (TTL 0) removes the record one second later.
    package static let goodbyeGrace = 1000
    /// RFC 6762 §10: TTL for records carrying a host name, and for all other records, in seconds.
    package static let hostRecordTTL: UInt32 = 120
    package static let otherRecordTTL: UInt32 = 4500
    /// RFC 6762 §6.7: TTL cap for legacy unicast replies, in seconds.
    package static let legacyUnicastTTLMax: UInt32 = 10
    /// RFC 6762 §5.2: refresh queries at 80, 85, 90 and 95 % of the TTL, plus up to 2 % jitter.
    package static let refreshPercentages = [80, 85, 90, 95]
    /// The percentage of the TTL at which refresh query number `index` (0–3) is due: 80 + 5 × index.
    @inline(__always)
    static func refreshPercentage(_ index: Int) -> Int { 80 + 5 * index }
    package static let refreshJitterPercentMax = 2
}
