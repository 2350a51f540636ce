/// The `DNSServiceFlags` bits of `dns_sd.h`, carried as a big-endian `uint32` in requests and replies.
///
/// Some bits have two names because one is an input flag and the other an output flag (for example
/// `moreComing` and `queueRequest` are both 0x1). Unknown bits are kept as they are.
public struct DNSServiceFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Output: more results are queued right behind this one.
    public static let moreComing = DNSServiceFlags(rawValue: 0x1)
    /// Input to `DNSServiceRegisterRecord`: queue the request instead of sending it now (same bit as `moreComing`).
    public static let queueRequest = DNSServiceFlags(rawValue: 0x1)
    /// Input to browses: also trigger over AWDL (same bit as `moreComing`).
    public static let autoTrigger = DNSServiceFlags(rawValue: 0x1)
    /// Output: the result is an addition (absent: a removal).
    public static let add = DNSServiceFlags(rawValue: 0x2)
    /// Output of domain enumeration: the default domain.
    public static let `default` = DNSServiceFlags(rawValue: 0x4)
    /// Registration: report a name conflict instead of renaming automatically.
    public static let noAutoRename = DNSServiceFlags(rawValue: 0x8)
    /// Record registration: a shared record (such as PTR).
    public static let shared = DNSServiceFlags(rawValue: 0x10)
    /// Record registration: a unique record, probed for before announcing.
    public static let unique = DNSServiceFlags(rawValue: 0x20)
    /// Domain enumeration: domains recommended for browsing.
    public static let browseDomains = DNSServiceFlags(rawValue: 0x40)
    /// Domain enumeration: domains recommended for registration.
    public static let registrationDomains = DNSServiceFlags(rawValue: 0x80)
    /// Query: long-lived unicast query.
    public static let longLivedQuery = DNSServiceFlags(rawValue: 0x100)
    /// Record registration: answer queries from outside the local link.
    public static let allowRemoteQuery = DNSServiceFlags(rawValue: 0x200)
    /// Query or registration: use multicast even for names outside `.local`.
    public static let forceMulticast = DNSServiceFlags(rawValue: 0x400)
    /// Deprecated name of `knownUnique`.
    public static let force = DNSServiceFlags(rawValue: 0x800)
    /// Record registration: unique, and known not to conflict, so not probed.
    public static let knownUnique = DNSServiceFlags(rawValue: 0x800)
    /// Query: also deliver intermediate results (CNAMEs, negative answers).
    public static let returnIntermediates = DNSServiceFlags(rawValue: 0x1000)
    /// Private to Apple (0x2000).
    public static let privateOne = DNSServiceFlags(rawValue: 0x2000)
    /// The operation shares the connection of a `DNSServiceCreateConnection` reference.
    public static let shareConnection = DNSServiceFlags(rawValue: 0x4000)
    /// Address query: suppress unusable answers (AAAA without IPv6 connectivity, and the like).
    public static let suppressUnusable = DNSServiceFlags(rawValue: 0x8000)
    /// Query: stop with `kDNSServiceErr_Timeout` when no answer arrives in time.
    public static let timeout = DNSServiceFlags(rawValue: 0x10000)
    /// Include peer-to-peer interfaces when the interface index is "any".
    public static let includeP2P = DNSServiceFlags(rawValue: 0x20000)
    /// Resolve: wake the sleeping host that offers the service.
    public static let wakeOnResolve = DNSServiceFlags(rawValue: 0x40000)
    /// Use the background traffic class for the operation's packets.
    public static let backgroundTrafficClass = DNSServiceFlags(rawValue: 0x80000)
    /// Include the AWDL interface when the interface index is "any".
    public static let includeAWDL = DNSServiceFlags(rawValue: 0x100000)
    /// Ask for DNSSEC validation (same bit as `validate`).
    public static let enableDNSSEC = DNSServiceFlags(rawValue: 0x200000)
    /// Ask for DNSSEC validation.
    public static let validate = DNSServiceFlags(rawValue: 0x200000)
    /// Output: DNSSEC status secure.
    public static let secure = DNSServiceFlags(rawValue: 0x200010)
    /// Output: DNSSEC status insecure.
    public static let insecure = DNSServiceFlags(rawValue: 0x200020)
    /// Output: DNSSEC status bogus.
    public static let bogus = DNSServiceFlags(rawValue: 0x200040)
    /// Output: DNSSEC status indeterminate.
    public static let indeterminate = DNSServiceFlags(rawValue: 0x200080)
    /// Query: ask for unicast responses (the QU bit).
    public static let unicastResponse = DNSServiceFlags(rawValue: 0x400000)
    /// Ask for optional DNSSEC validation.
    public static let validateOptional = DNSServiceFlags(rawValue: 0x800000)
    /// Registration: a service that only wakes the host, not advertised on its own.
    public static let wakeOnlyService = DNSServiceFlags(rawValue: 0x1000000)
    /// Browse threshold: stop after one answer.
    public static let thresholdOne = DNSServiceFlags(rawValue: 0x2000000)
    /// Browse threshold: the "finder" threshold.
    public static let thresholdFinder = DNSServiceFlags(rawValue: 0x4000000)
    /// Output: the browse threshold was reached (same bit as `thresholdOne`).
    public static let thresholdReached = DNSServiceFlags(rawValue: 0x2000000)
    /// Private to Apple (0x8000000).
    public static let privateTwo = DNSServiceFlags(rawValue: 0x8000000)
    /// Private to Apple (0x10000000).
    public static let privateThree = DNSServiceFlags(rawValue: 0x10000000)
    /// Private to Apple (0x20000000).
    public static let privateFour = DNSServiceFlags(rawValue: 0x20000000)
    /// Private to Apple (0x40000000).
    public static let privateFive = DNSServiceFlags(rawValue: 0x40000000)
    /// Output of query and address callbacks: the answer came from the cache.
    public static let answeredFromCache = DNSServiceFlags(rawValue: 0x40000000)
    /// Input: expired answers may be delivered while a refresh is under way.
    public static let allowExpiredAnswers = DNSServiceFlags(rawValue: 0x80000000)
    /// Output: this answer is expired (same bit as `allowExpiredAnswers`).
    public static let expiredAnswer = DNSServiceFlags(rawValue: 0x80000000)
}
