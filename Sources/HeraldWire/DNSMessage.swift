/// A DNS message as mDNS uses it (RFC 1035 §4.1, RFC 6762 §18): a header and four sections.
public struct DNSMessage: Hashable, Sendable {
    /// The query identifier; zero in multicast mDNS messages, echoed in legacy unicast replies (RFC 6762 §18.1).
    public var id: UInt16
    public var flags: DNSFlags
    public var questions: [DNSQuestion]
    public var answers: [ResourceRecord]
    public var authorities: [ResourceRecord]
    public var additionals: [ResourceRecord]

    public init(
        id: UInt16 = 0, flags: DNSFlags = DNSFlags(), questions: [DNSQuestion] = [], answers: [ResourceRecord] = [],
        authorities: [ResourceRecord] = [], additionals: [ResourceRecord] = []
    ) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// True for a response (QR set).
    public var isResponse: Bool { flags.isResponse }

    /// Every record of the answer, authority and additional sections, in order.
    public var allRecords: [ResourceRecord] { answers + authorities + additionals }

    /// The number of questions and records.
    public var entryCount: Int { questions.count + answers.count + authorities.count + additionals.count }
}

/// The 16-bit flags word of the header (RFC 1035 §4.1.1, RFC 6762 §18.2–18.11).
public struct DNSFlags: Hashable, Sendable, RawRepresentable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init() { rawValue = 0 }

    /// The flags of an mDNS response: QR and AA set (RFC 6762 §18.2, §18.4).
    public static let authoritativeResponse = DNSFlags(rawValue: 0x8400)

    private func bit(_ mask: UInt16) -> Bool { rawValue & mask != 0 }
    private mutating func set(_ mask: UInt16, _ on: Bool) { if on { rawValue |= mask } else { rawValue &= ~mask } }

    /// QR: the message is a response.
    public var isResponse: Bool {
        get { bit(0x8000) }
        set { set(0x8000, newValue) }
    }
    /// OPCODE (4 bits); mDNS uses 0 only and ignores messages with another (RFC 6762 §18.3).
    public var opcode: UInt8 {
        get { UInt8((rawValue >> 11) & 0xF) }
        set { rawValue = rawValue & ~0x7800 | (UInt16(newValue & 0xF) << 11) }
    }
    /// AA: authoritative answer.
    public var isAuthoritative: Bool {
        get { bit(0x0400) }
        set { set(0x0400, newValue) }
    }
    /// TC: in an mDNS query, more known answers follow in later packets (RFC 6762 §18.5).
    public var isTruncated: Bool {
        get { bit(0x0200) }
        set { set(0x0200, newValue) }
    }
    /// RD: recursion desired.
    public var recursionDesired: Bool {
        get { bit(0x0100) }
        set { set(0x0100, newValue) }
    }
    /// RA: recursion available.
    public var recursionAvailable: Bool {
        get { bit(0x0080) }
        set { set(0x0080, newValue) }
    }
    /// RCODE (4 bits); mDNS ignores messages with a non-zero one (RFC 6762 §18.11).
    public var responseCode: UInt8 {
        get { UInt8(rawValue & 0xF) }
        set { rawValue = rawValue & ~0xF | UInt16(newValue & 0xF) }
    }
}

/// A question (RFC 1035 §4.1.2) with the mDNS unicast-response (QU) bit (RFC 6762 §5.4).
public struct DNSQuestion: Hashable, Sendable, CustomStringConvertible {
    public var name: DNSName
    public var type: RecordType
    public var recordClass: RecordClass
    /// QU: the asker would like a unicast reply (the top bit of the class field).
    public var unicastResponse: Bool

    public init(name: DNSName, type: RecordType, recordClass: RecordClass = .internet, unicastResponse: Bool = false) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.unicastResponse = unicastResponse
    }

    public var description: String {
        "\(name) \(recordClass) \(type)" + (unicastResponse ? " QU" : "")
    }
}

/// A resource record (RFC 1035 §4.1.3) with the mDNS cache-flush bit (RFC 6762 §10.2).
public struct ResourceRecord: Hashable, Sendable, CustomStringConvertible {
    public var name: DNSName
    public var type: RecordType
    /// The class without the cache-flush bit. For OPT this field is the sender's UDP payload size and is kept whole.
    public var recordClass: RecordClass
    /// The cache-flush bit (top bit of the class field); never set for OPT.
    public var cacheFlush: Bool
    /// Time to live in seconds; zero announces a goodbye (RFC 6762 §10.1).
    public var ttl: UInt32
    public var data: RecordData

    /// Makes a record whose type is implied by its data.
    public init(
        name: DNSName, ttl: UInt32, data: RecordData, recordClass: RecordClass = .internet, cacheFlush: Bool = false
    ) {
        self.init(
            name: name, type: data.impliedType ?? RecordType(0), recordClass: recordClass, cacheFlush: cacheFlush,
            ttl: ttl, data: data)
    }

    /// Makes a record with an explicit type (needed for `.opaque` data).
    public init(
        name: DNSName, type: RecordType, recordClass: RecordClass = .internet, cacheFlush: Bool = false,
        ttl: UInt32, data: RecordData
    ) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.cacheFlush = cacheFlush
        self.ttl = ttl
        self.data = data
    }

    public var description: String {
        "\(name) \(ttl) \(recordClass)\(cacheFlush ? " (flush)" : "") \(type) \(data)"
    }
}
