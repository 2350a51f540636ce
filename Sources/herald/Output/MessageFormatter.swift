import HeraldWire

/// Turns DNS messages into the text people read (`dig`-like sections) or JSON lines for scripts.
enum MessageFormatter {
    static func text(_ message: DNSMessage, index: Int, size: Int) -> String {
        var lines: [String] = []
        var flags: [String] = [message.isResponse ? "response" : "query"]
        if message.flags.isAuthoritative { flags.append("aa") }
        if message.flags.isTruncated { flags.append("tc") }
        lines.append(";; message \(index + 1): \(size) bytes, id \(message.id), \(flags.joined(separator: " "))")
        if !message.questions.isEmpty {
            lines.append(";; QUESTION")
            lines += message.questions.map { "  \($0)" }
        }
        for (title, records) in [
            ("ANSWER", message.answers), ("AUTHORITY", message.authorities), ("ADDITIONAL", message.additionals),
        ]
        where !records.isEmpty {
            lines.append(";; \(title)")
            lines += records.map { "  \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ message: DNSMessage, index: Int) -> String {
        func record(_ r: ResourceRecord) -> String {
            "{\"name\":\(quote(r.name.description)),\"type\":\(quote(r.type.description)),\"ttl\":\(r.ttl),"
                + "\"cacheFlush\":\(r.cacheFlush),\"data\":\(quote(r.data.description))}"
        }
        let questions = message.questions.map {
            "{\"name\":\(quote($0.name.description)),\"type\":\(quote($0.type.description)),\"unicastResponse\":\($0.unicastResponse)}"
        }
        return "{\"index\":\(index + 1),\"id\":\(message.id),\"response\":\(message.isResponse),"
            + "\"truncated\":\(message.flags.isTruncated),\"questions\":[\(questions.joined(separator: ","))],"
            + "\"answers\":[\(message.answers.map(record).joined(separator: ","))],"
            + "\"authorities\":[\(message.authorities.map(record).joined(separator: ","))],"
            + "\"additionals\":[\(message.additionals.map(record).joined(separator: ","))]}"
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
