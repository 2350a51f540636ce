import HeraldWire

/// A client's standing request and what it has learnt so far.
struct ClientOperation: Sendable {
    enum Kind: Sendable {
        /// Records of one set (or ANY) — DNSServiceQueryRecord, address lookups.
        case query(RecordKey)
        /// Instances of a service type: PTR records of the type name (RFC 6763 §4).
        case browse(DNSName)
        /// SRV, TXT and the target's addresses of one instance (RFC 6763 §5, §6).
        case resolve(DNSName)
    }

    /// What a resolve knows on one link.
    struct ResolveState: Sendable {
        var srv: SRVData?
        var txt: TXTRecord?
        var addresses: [IPAddress] = []
        var lastReported: ResolvedService?
    }

    var kind: Kind
    /// Only this interface, or every link when nil.
    var interfaceIndex: Int?
    /// The questions this operation asks on each link.
    var keys = PerLink<[RecordKey]>()
    var resolveStates = PerLink<ResolveState>()
    /// A query that also reports peers' negative answers (DNSServiceQueryRecord's ReturnIntermediates).
    var reportsNegativeAnswers = false
    /// The negative answers reported, by link: when each ends.
    var negativeAnswers = PerLink<Instant>()

    func applies(to link: LinkID) -> Bool { interfaceIndex == nil || interfaceIndex == link.interfaceIndex }

    /// The questions to ask on a link when the operation starts.
    var initialKeys: [RecordKey] {
        switch kind {
        case .query(let key): return [key]
        case .browse(let type): return [RecordKey(name: type, type: .ptr)]
        case .resolve(let instance):
            return [RecordKey(name: instance, type: .srv), RecordKey(name: instance, type: .txt)]
        }
    }

    mutating func forget(_ link: LinkID) {
        keys[link] = nil
        resolveStates[link] = nil
        negativeAnswers[link] = nil
    }
}
