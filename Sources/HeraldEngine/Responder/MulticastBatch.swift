import HeraldWire

/// What the responder multicasts on one link in one step, gathered so that many publications share packets: RFC
/// 6762 §8.1 asks for probes to be combined, §8.3 and §6.4 for announcements and goodbyes to be aggregated. A
/// hundred services registered or withdrawn together cost a few packets, not hundreds, and a peer's socket buffer
/// is not flooded by a burst of goodbyes it would then miss.
struct MulticastBatch: Sendable {
    /// One publication's probe: its questions (type ANY for each name it claims) and the records it proposes.
    struct Probe: Sendable {
        var questions: [DNSQuestion]
        var proposed: [ResourceRecord]
    }

    private(set) var probes: [Probe] = []
    private(set) var announced: [ResourceRecord] = []
    private(set) var goodbyes: [ResourceRecord] = []

    var isEmpty: Bool { probes.isEmpty && announced.isEmpty && goodbyes.isEmpty }

    mutating func add(_ probe: Probe) { probes.append(probe) }

    /// Adds records to announce. A goodbye for the same record earlier in the step is dropped: the later word wins.
    mutating func announce(_ records: [ResourceRecord]) { Self.add(records, to: &announced, replacing: &goodbyes) }

    /// Adds goodbyes (records with TTL 0). An announcement of the same record earlier in the step is dropped.
    mutating func sayGoodbye(_ records: [ResourceRecord]) { Self.add(records, to: &goodbyes, replacing: &announced) }

    /// Adds `records` to `list`, each once, and takes them out of `other`.
    private static func add(
        _ records: [ResourceRecord], to list: inout [ResourceRecord], replacing other: inout [ResourceRecord]
    ) {
        let identities = Set(records.map(RecordIdentity.init))
        other.removeAll { identities.contains(RecordIdentity($0)) }
        let present = Set(list.map(RecordIdentity.init))
        list += records.filter { !present.contains(RecordIdentity($0)) }
    }

    /// The probes as query messages of `room.shared` bytes at most, as few as they fit in. One publication's probe is
    /// never split, so a peer always sees all the records proposed for a name together (§8.2's tie-break compares
    /// them); a probe too big to share a message goes alone, in one of up to `room.alone` bytes.
    static func pack(_ probes: [Probe], room: MessageRoom) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var start = 0
        while start < probes.count {
            // The most probes from `start` on that fit in one message: guesses double until one fails, then the
            // gap between the largest that fits and the smallest that does not is halved.
            let remaining = probes.count - start
            var fitting = 0
            var failing = remaining + 1
            var guess = 1
            var message: [UInt8]?
            while fitting + 1 < failing {
                if let written = write(probes[start..<start + guess], limit: room.shared) {
                    fitting = guess
                    message = written
                } else {
                    failing = guess
                }
                guess = failing > remaining ? min(guess * 2, remaining) : (fitting + failing) / 2
            }
            // Alone, a probe goes out as far as it fits (the size checks on registration make that rare).
            packets.append(message ?? writeTruncating(probes[start], limit: room.alone))
            start += max(fitting, 1)
        }
        return packets
    }

    /// The probes in one message, or nil when they do not all fit.
    private static func write(_ probes: ArraySlice<Probe>, limit: Int) -> [UInt8]? {
        var writer = MessageWriter(limit: limit)
        for question in probes.flatMap(\.questions) where !writer.append(question) { return nil }
        for record in probes.flatMap(\.proposed) where !writer.append(record, to: .authority) { return nil }
        return writer.message
    }

    /// One probe too big for a message: its questions and as many of its records as fit.
    private static func writeTruncating(_ probe: Probe, limit: Int) -> [UInt8] {
        var writer = MessageWriter(limit: limit)
        for question in probe.questions { writer.append(question) }
        for record in probe.proposed { writer.append(record, to: .authority) }
        return writer.message
    }
}
