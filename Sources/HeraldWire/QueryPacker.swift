/// Packs the questions and known answers of one mDNS query into as many messages as the size limit
/// needs (RFC 6762 §7.2): every message but the last has the TC bit set, telling responders that more
/// known answers follow.
public enum QueryPacker {
    /// Returns the messages to send, in order. Questions come first; known answers fill the rest.
    /// A single entry too large for an empty message is left out rather than sent in a broken packet.
    public static func pack(questions: [DNSQuestion], knownAnswers: [ResourceRecord], limit: Int) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var writer = MessageWriter(limit: limit)
        var questionIndex = 0
        while questionIndex < questions.count {
            if writer.append(questions[questionIndex]) {
                questionIndex += 1
            } else if writer.isEmpty {
                questionIndex += 1  // cannot fit even alone
            } else {
                // Questions that overflow start a separate query; no TC, since no known answers span the two.
                messages.append(writer.message)
                writer = MessageWriter(limit: limit)
            }
        }
        for answer in knownAnswers where !writer.append(answer, to: .answer) {
            if writer.isEmpty { continue }
            writer.setTruncated(true)
            messages.append(writer.message)
            writer = MessageWriter(limit: limit)
            writer.append(answer, to: .answer)
        }
        if !writer.isEmpty { messages.append(writer.message) }
        return messages
    }
}
