/// Packs the questions and known answers of one mDNS query into as many messages as the size limit
/// needs (RFC 6762 §7.2). When the known answers do not fit with the questions, they continue in the
/// following messages, and every message but the last of that run has the TC bit set, telling responders
/// that more known answers follow; the last message never has it.
public enum QueryPacker {
    /// Returns the messages to send, in order. Questions come first; known answers fill the rest.
    /// A single entry too large for an empty message is left out rather than sent in a broken packet, and
    /// leaving it out never closes the message being filled.
    public static func pack(questions: [DNSQuestion], knownAnswers: [ResourceRecord], limit: Int) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var writer = MessageWriter(limit: limit)
        for question in questions where !writer.append(question) {
            // Only start a new message for a question that fits in one on its own; otherwise the question
            // is left out, and the message being filled stays open for the rest.
            var fresh = MessageWriter(limit: limit)
            guard fresh.append(question) else { continue }
            // Questions that overflow start a separate query; no TC, since no known answers span the two.
            if !writer.isEmpty { messages.append(writer.message) }
            writer = fresh
        }
        for answer in knownAnswers where !writer.append(answer, to: .answer) {
            var fresh = MessageWriter(limit: limit)
            guard fresh.append(answer, to: .answer) else { continue }
            if !writer.isEmpty {
                writer.setTruncated(true)
                messages.append(writer.message)
            }
            writer = fresh
        }
        if !writer.isEmpty { messages.append(writer.message) }
        return messages
    }
}
