import HeraldEngine
import HeraldWire

/// How long NSS lookups wait. libnss-mdns asks for IPv4 and then IPv6 on two connections, one after the
/// other, and a program waits for both: so a miss must be short, and the second question must be answered
/// from what the first one learnt.
package struct NSSTiming: Hashable, Sendable {
    /// How long a lookup waits for a first answer before it reports a miss. The first query leaves after
    /// 20–120 ms (RFC 6762 §5.2) and a responder answers a unique record at once, or within 20–120 ms for a
    /// shared one (§6), so an answer that will come at all comes well within a second; the continuous
    /// query keeps running for a while, and a later question is answered from what it learns.
    package var missAfter: Int64 = 1000
    /// Once one family answered, how long to wait for the other: responders send both families' addresses
    /// together (§6.2), so only the spread between the IPv4 and IPv6 replies remains.
    package var otherFamilyAfter: Int64 = 250
    /// How long a finished lookup keeps its engine queries and answers, so that the next question about the
    /// same name (the other family, the next program) is answered at once.
    package var keepFinished: Int64 = 5000

    package init() {}
}

/// An answer to a host-name lookup: an address and where it was seen.
package struct NSSFoundAddress: Hashable, Sendable {
    package var address: IPAddress
    package var interfaceIndex: Int
    /// The family of the link it arrived on.
    package var linkFamily: IPFamily

    package init(address: IPAddress, interfaceIndex: Int, linkFamily: IPFamily) {
        self.address = address
        self.interfaceIndex = interfaceIndex
        self.linkFamily = linkFamily
    }
}

/// An answer to a reverse lookup: the host name of an address and where it was seen.
package struct NSSFoundName: Hashable, Sendable {
    package var name: DNSName
    package var interfaceIndex: Int
    package var linkFamily: IPFamily

    package init(name: DNSName, interfaceIndex: Int, linkFamily: IPFamily) {
        self.name = name
        self.interfaceIndex = interfaceIndex
        self.linkFamily = linkFamily
    }
}

/// What a waiting request should do now.
package enum NSSWaitOutcome<Answer: Hashable & Sendable>: Hashable, Sendable {
    case answer(Answer)
    case notFound
    /// A miss before the wait is over: the host said it has no address of the families asked for (its NSEC).
    case denied
    /// Ask again at this monotonic millisecond, or when something new arrives.
    case waitUntil(Int64)
}

/// What one host-name lookup has learnt since it started, and the rules for answering each family from it.
package struct NSSHostLookupProgress: Hashable, Sendable {
    package let startedAt: Int64
    /// Addresses in the order they arrived.
    package private(set) var found: [NSSFoundAddress] = []
    /// When the first address (of either family) arrived.
    package private(set) var firstFoundAt: Int64?
    /// The links on which the host said it has no address of a family (an NSEC record, RFC 6762 §6.1).
    package private(set) var deniedOn: [IPFamily: Set<LinkID>] = [:]

    package init(startedAt: Int64) {
        self.startedAt = startedAt
    }

    package mutating func add(_ address: NSSFoundAddress, at time: Int64) {
        guard !found.contains(where: { $0.address == address.address }) else { return }
        found.append(address)
        if firstFoundAt == nil { firstFoundAt = time }
    }

    /// An address went away (goodbye, expiry).
    package mutating func remove(_ address: IPAddress) {
        found.removeAll { $0.address == address }
    }

    /// The host's negative answer for one family on a link began (`denied`) or ended.
    package mutating func note(_ family: IPFamily, denied: Bool, on link: LinkID) {
        if denied {
            deniedOn[family, default: []].insert(link)
        } else {
            deniedOn[family]?.remove(link)
            if deniedOn[family]?.isEmpty == true { deniedOn[family] = nil }
        }
    }

    /// True when the host said it has no address of any family asked for, on every interface it was heard on (a
    /// host on two networks may have an address of the family on one of them only).
    func isDenied(_ families: NSSAddressFamilies) -> Bool {
        let heardOn = Set(found.map(\.interfaceIndex))
        return [IPFamily.ipv4, .ipv6].allSatisfy { family in
            guard families.accepts(family) else { return true }
            guard let links = deniedOn[family] else { return false }
            return heardOn.isSubset(of: links.map(\.interfaceIndex))
        }
    }

    /// The answer for `families` at `time`: an address when one is known; a miss once the wait is over, or at
    /// once when the host said it has no address of the families asked for.
    package func outcome(for families: NSSAddressFamilies, at time: Int64, timing: NSSTiming) -> NSSWaitOutcome<
        NSSFoundAddress
    > {
        if let best = Self.best(found.filter { families.accepts($0.address.family) }, for: families) {
            return .answer(best)
        }
        if isDenied(families) { return .denied }
        var deadline = startedAt + timing.missAfter
        if families != .any, let first = firstFoundAt { deadline = min(deadline, first + timing.otherFamilyAfter) }
        return time >= deadline ? .notFound : .waitUntil(deadline)
    }

    /// The address to report: IPv4 first for `.any`; for IPv6 a routable address before a link-local one
    /// (which needs its interface); otherwise the first that arrived.
    package static func best(_ candidates: [NSSFoundAddress], for families: NSSAddressFamilies) -> NSSFoundAddress? {
        if families == .any, let v4 = candidates.first(where: { $0.address.family == .ipv4 }) { return v4 }
        return candidates.first { !$0.address.isLinkLocal } ?? candidates.first
    }
}

/// What one reverse lookup has learnt since it started.
package struct NSSReverseLookupProgress: Hashable, Sendable {
    package let startedAt: Int64
    package private(set) var found: [NSSFoundName] = []

    package init(startedAt: Int64) {
        self.startedAt = startedAt
    }

    package mutating func add(_ name: NSSFoundName) {
        guard !found.contains(where: { $0.name == name.name }) else { return }
        found.append(name)
    }

    package mutating func remove(_ name: DNSName) {
        found.removeAll { $0.name == name }
    }

    /// The first name that arrived; a miss once the wait is over.
    package func outcome(at time: Int64, timing: NSSTiming) -> NSSWaitOutcome<NSSFoundName> {
        if let first = found.first { return .answer(first) }
        let deadline = startedAt + timing.missAfter
        return time >= deadline ? .notFound : .waitUntil(deadline)
    }
}

extension IPAddress {
    /// 169.254.0.0/16 or fe80::/10.
    var isLinkLocal: Bool {
        switch self {
        case .v4(let address): return address.isLinkLocal
        case .v6(let address): return address.isLinkLocal
        }
    }
}
