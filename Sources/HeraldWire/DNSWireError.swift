/// Why bytes could not be read (or written) as a DNS message: the rule broken and the byte offset where it
/// was found.
public struct DNSWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Offset in the message of the byte (or field) that broke the rule.
    public var offset: Int
    public var rule: Rule

    public init(offset: Int, rule: Rule) {
        self.offset = offset
        self.rule = rule
    }

    /// The four sections of a message, for errors that concern one.
    public enum Section: String, Hashable, Sendable {
        case question, answer, authority, additional
    }

    /// The rules a message can break.
    public enum Rule: Hashable, Sendable {
        /// Fewer than the 12 bytes of a header.
        case headerTruncated(length: Int)
        /// A section's count promises more entries than the message holds.
        case countExceedsData(section: Section, declared: Int, found: Int)
        /// A question ends before its type and class.
        case questionTruncated
        /// A record ends before its fixed fields.
        case recordTruncated
        /// A name runs past the end of the message.
        case nameTruncated
        /// A length byte with the 0x40 or 0x80 prefix: a label longer than 63 bytes or an unsupported label type.
        case invalidLabelLength(byte: UInt8)
        /// A name longer than 255 bytes once decompressed.
        case nameTooLong(length: Int)
        /// A compression pointer past the end of the message.
        case pointerOutOfBounds(target: Int)
        /// A compression pointer to a later position: pointers must refer to a prior occurrence.
        case forwardPointer(target: Int)
        /// A compression pointer back into the part of the same name already read: it would loop for ever.
        case pointerLoop(target: Int)
        /// RDLENGTH runs past the end of the message.
        case rdataTruncated(type: RecordType, declared: Int, available: Int)
        /// The record data's own structure uses a different number of bytes than RDLENGTH says.
        case rdataLengthMismatch(type: RecordType, declared: Int, used: Int)
        /// A TXT character-string runs past the end of the record data.
        case txtStringOverrun
        /// A HINFO character-string runs past the end of the record data.
        case characterStringOverrun
        /// NSEC type bit maps break RFC 4034 §4.1.2.
        case invalidTypeBitmap(reason: String)
        /// (Writing) the message does not fit in the size limit.
        case messageTooLarge(size: Int, limit: Int)
    }

    public var description: String {
        "at byte \(offset): " + ruleDescription
    }

    /// The rule in words, with the specification that states it.
    public var ruleDescription: String {
        switch rule {
        case .headerTruncated(let length):
            return "the message has \(length) bytes, fewer than the 12-byte header (RFC 1035 §4.1.1)"
        case .countExceedsData(let section, let declared, let found):
            return "the header declares \(declared) \(section.rawValue) entries but the message ends after \(found)"
        case .questionTruncated:
            return "the question ends before its type and class (RFC 1035 §4.1.2)"
        case .recordTruncated:
            return "the record ends before its type, class, TTL and RDLENGTH (RFC 1035 §4.1.3)"
        case .nameTruncated:
            return "the name runs past the end of the message"
        case .invalidLabelLength(let byte):
            return "label length byte 0x\(String(byte, radix: 16)) is not allowed: labels hold at most 63 bytes "
                + "and the 0x40 and 0x80 label types are not supported (RFC 1035 §4.1.4, RFC 6891 §5)"
        case .nameTooLong(let length):
            return "the name takes \(length) bytes decompressed, more than the 255 allowed (RFC 1035 §2.3.4)"
        case .pointerOutOfBounds(let target):
            return "compression pointer to byte \(target), past the end of the message (RFC 1035 §4.1.4)"
        case .forwardPointer(let target):
            return "compression pointer to byte \(target), which is not before it: pointers must refer to a "
                + "prior occurrence (RFC 1035 §4.1.4)"
        case .pointerLoop(let target):
            return "compression pointer to byte \(target), inside the part of the name already read: it would loop"
        case .rdataTruncated(let type, let declared, let available):
            return "\(type) record data of \(declared) bytes declared but only \(available) remain in the message"
        case .rdataLengthMismatch(let type, let declared, let used):
            return "\(type) record data declared as \(declared) bytes but its contents take \(used)"
        case .txtStringOverrun:
            return "a TXT character-string runs past the end of the record data (RFC 6763 §6.1)"
        case .characterStringOverrun:
            return "a character-string runs past the end of the record data (RFC 1035 §3.3)"
        case .invalidTypeBitmap(let reason):
            return "invalid NSEC type bit map: \(reason) (RFC 4034 §4.1.2)"
        case .messageTooLarge(let size, let limit):
            return "the message needs \(size) bytes, more than the limit of \(limit)"
        }
    }
}
