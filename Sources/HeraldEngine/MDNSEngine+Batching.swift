import HeraldWire

/// The responder's probes, announcements and goodbyes wait in one ``MulticastBatch`` per link until the end of the
/// step that made them (an ``MDNSEngine/advance(to:)``, or whatever came before ``MDNSEngine/takeActions()``), and
/// then go out together, in as few packets as they fit.
extension MDNSEngine {
    /// Queues a probe for the end of the step.
    mutating func queueProbe(_ probe: MulticastBatch.Probe, on link: LinkID) {
        multicastBatches[link, default: MulticastBatch()].add(probe)
    }

    /// Queues records to announce at the end of the step, with the additional records that go with them then.
    mutating func queueAnnouncement(_ records: [ResourceRecord], on link: LinkID) {
        multicastBatches[link, default: MulticastBatch()].announce(records)
    }

    /// Queues goodbyes (records already at TTL 0) for the end of the step.
    mutating func queueGoodbyes(_ records: [ResourceRecord], on link: LinkID) {
        multicastBatches[link, default: MulticastBatch()].sayGoodbye(records)
    }

    /// Sends what the step gathered: on each link the probes first, then one response with the goodbyes and the
    /// announcements, split only where the size limit requires.
    mutating func flushMulticasts() {
        for link in multicastBatches.keys.sorted() { flushMulticasts(on: link) }
    }

    /// Sends what the step gathered on one link (before the link, or the engine, forgets its records).
    mutating func flushMulticasts(on link: LinkID) {
        guard let batch = multicastBatches.removeValue(forKey: link), !batch.isEmpty else { return }
        let room = messageRoom(for: link)
        for bytes in MulticastBatch.pack(batch.probes, room: room) { send(bytes, on: link, to: .multicast) }
        let additionals = AnswerBuilder(authority: authority, link: link).additionals(for: batch.announced)
        for bytes in AnswerBuilder.pack(answers: batch.goodbyes + batch.announced, additionals: additionals, room: room)
        {
            statistics.responsesSent += 1
            send(bytes, on: link, to: .multicast)
        }
    }
}
