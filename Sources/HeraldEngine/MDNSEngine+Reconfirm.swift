import HeraldWire

/// Reconfirming a cached record that an app found not to work (DNSServiceReconfirmRecord, RFC 6762 §10.4).
extension MDNSEngine {
    /// A query that a reconfirmation still has to send.
    struct ReconfirmQuery: Sendable {
        var at: Instant
        var link: LinkID
        var question: DNSQuestion

        /// True when `other` asks the same question on the same link less than a second apart (RFC 6762 §5.2).
        func isNear(_ other: ReconfirmQuery) -> Bool {
            link == other.link && question == other.question && abs(at - other.at) < MDNSConstants.multicastRateLimit
        }
    }

    /// Asks for `record` again on each link where it is cached from a peer (on `interfaceIndex` only, when given),
    /// now and two seconds later. Unless a response carrying it is seen within ten seconds, it is flushed, and the
    /// operations following it hear that it is gone. This host's own records are never flushed this way.
    ///
    /// Asking again while a record is being reconfirmed changes nothing, and a question goes out at most once a
    /// second on a link (RFC 6762 §5.2) however many of its records are reconfirmed: an app that calls this in a
    /// loop cannot make the host flood the network, nor keep a record it wants gone.
    package mutating func reconfirm(_ record: ResourceRecord, interfaceIndex: Int?, at time: Instant) {
        now = max(now, time)
        guard !isShutDown else { return }
        let question = DNSQuestion(name: record.name, type: record.type, recordClass: record.recordClass)
        for link in links.keys.sorted() where interfaceIndex == nil || link.interfaceIndex == interfaceIndex {
            guard let handle = caches[link]?.handle(of: record), caches[link]?.isFromPeer(handle) == true,
                failureObserver.reconfirm(handle, on: link, at: now)
            else { continue }
            for delay in [0, MDNSConstants.reconfirmQueryGap] {
                let query = ReconfirmQuery(at: now + delay, link: link, question: question)
                // A query of the same question due within a second of this one serves both records.
                guard !reconfirmQueries.contains(where: query.isNear),
                    reconfirmQueries.count < MDNSConstants.reconfirmQueriesPending
                else { continue }
                reconfirmQueries.append(query)
            }
        }
        sendDueReconfirmQueries()
    }

    /// Sends the reconfirmation queries due by now: the bare question, without known answers, so that the owner
    /// answers with the record if it still has it.
    mutating func sendDueReconfirmQueries() {
        guard reconfirmQueries.contains(where: { $0.at <= now }) else { return }
        let due = reconfirmQueries.filter { $0.at <= now }
        reconfirmQueries.removeAll { $0.at <= now }
        reconfirmQueriesSent.removeAll { now - $0.at >= MDNSConstants.multicastRateLimit }
        for var query in due {
            query.at = now
            // Asked on the link less than a second ago (for another record): it goes out a second after that instead,
            // unless a query of the same question is due within a second of then anyway.
            if let sent = reconfirmQueriesSent.first(where: query.isNear) {
                query.at = sent.at + MDNSConstants.multicastRateLimit
                if !reconfirmQueries.contains(where: query.isNear) { reconfirmQueries.append(query) }
                continue
            }
            reconfirmQueriesSent.append(query)
            let message = DNSMessage(questions: [query.question])
            guard let bytes = try? message.serialized(limit: messageRoom(for: query.link).shared) else { continue }
            statistics.queriesSent += 1
            send(bytes, on: query.link, to: .multicast)
        }
    }
}
