import HeraldWire

/// Where an outgoing packet goes on its link.
package enum PacketDestination: Hashable, Sendable, CustomStringConvertible {
    /// The mDNS group of the link's family (224.0.0.251 or ff02::fb), port 5353.
    case multicast
    /// One peer: a unicast reply to a QU question or to a legacy (non-5353) querier.
    case unicast(SocketAddress)

    package var description: String {
        switch self {
        case .multicast: return "multicast"
        case .unicast(let address): return "unicast \(address)"
        }
    }
}

/// A packet the engine wants sent.
package struct OutgoingPacket: Hashable, Sendable {
    package var link: LinkID
    package var destination: PacketDestination
    package var bytes: [UInt8]

    package init(link: LinkID, destination: PacketDestination, bytes: [UInt8]) {
        self.link = link
        self.destination = destination
        self.bytes = bytes
    }
}

/// Identifies one client operation (a browse, resolve, query or registration) for its whole life.
package struct OperationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "op\(rawValue)" }
}

/// A service whose SRV and TXT records are known (RFC 6763 §6, §5), with the target's addresses so far.
package struct ResolvedService: Hashable, Sendable {
    package var instance: DNSName
    package var link: LinkID
    package var target: DNSName
    package var port: UInt16
    package var priority: UInt16
    package var weight: UInt16
    package var txt: TXTRecord
    /// The target host's addresses known on this link, in order.
    package var addresses: [IPAddress]
}

/// Why a registration failed.
package enum RegistrationFailure: Hashable, Sendable {
    /// Another host owns the name and the client asked for no automatic renaming.
    case nameConflict
}

/// Something an operation's client should hear about.
package enum OperationEvent: Hashable, Sendable {
    /// A query's answer appeared (or changed: the old data is removed separately).
    case recordAdded(ResourceRecord, LinkID)
    /// A query's answer went away (goodbye, expiry, flush or a vanished peer).
    case recordRemoved(ResourceRecord, LinkID)
    /// A peer's NSEC record says the queried name has no record of the queried type (RFC 6762 §6.1), for `ttl`
    /// seconds; only for queries started with `reportingNegativeAnswers`.
    case negativeAnswerAdded(RecordKey, LinkID, ttl: UInt32)
    /// The negative answer no longer holds: a record of the type arrived, or the NSEC record went away.
    case negativeAnswerRemoved(RecordKey, LinkID)
    /// A browse found a service instance.
    case instanceAdded(DNSName, LinkID)
    /// A browse lost a service instance.
    case instanceRemoved(DNSName, LinkID)
    /// A resolve completed, or its result changed.
    case resolved(ResolvedService)
    /// A registration finished probing and is announced under this name (possibly renamed).
    case registered(DNSName)
    /// A registration could not keep its name.
    case registrationFailed(RegistrationFailure)
}

/// What the engine asks of whoever drives it.
package enum EngineAction: Hashable, Sendable {
    case send(OutgoingPacket)
    case deliver(OperationID, OperationEvent)
}
