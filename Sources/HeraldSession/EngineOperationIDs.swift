import HeraldEngine

/// Who started an engine operation, and so who gets its events. The owner is written in the ID's top byte, so
/// that an event finds its owner without any table, and the parts of the daemon can never hand out the same ID.
package enum EngineOperationOwner: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// The engine's own publication of the host's addresses (`OperationID(0)`); no one outside it gets its events.
    case engine = 0
    /// The dnssd sessions of apps (``SessionCore``).
    case appSessions = 1
    /// The administrator's service files.
    case staticServices = 2
    /// `.local` name lookups for libnss-mdns.
    case nss = 3
    /// The sessions of Avahi's D-Bus API (a ``SessionCore`` of their own).
    case avahiSessions = 4

    /// The owner of `id`: what its top byte names, or nil for a byte no allocator writes.
    package init?(of id: OperationID) {
        self.init(rawValue: UInt8(truncatingIfNeeded: id.rawValue >> EngineOperationIDs.ownerShift))
    }

    package var description: String {
        switch self {
        case .engine: "engine"
        case .appSessions: "app sessions"
        case .staticServices: "static services"
        case .nss: "NSS"
        case .avahiSessions: "Avahi D-Bus sessions"
        }
    }
}

/// Hands out the engine operation IDs of one owner: its tag in the top byte, a counter in the 56 bits below
/// (enough for a new operation every nanosecond for two years).
package struct EngineOperationIDs: Sendable {
    static let ownerShift: UInt64 = 56
    package let owner: EngineOperationOwner
    private var last: UInt64 = 0

    package init(owner: EngineOperationOwner) {
        precondition(owner != .engine, "the engine numbers its own operation")
        self.owner = owner
    }

    /// A new ID, never handed out before by any allocator.
    package mutating func next() -> OperationID {
        last += 1
        precondition(last < 1 << Self.ownerShift, "\(owner) ran out of engine operation IDs")
        return OperationID(UInt64(owner.rawValue) << Self.ownerShift | last)
    }
}

/// Receives the engine events of the operations one owner started.
package protocol EngineEventReceiver: AnyObject {
    /// An event of one of the receiver's operations.
    func receive(_ event: OperationEvent, for operation: OperationID)
    /// The engine's actions of one step have all been delivered (replies can go out together).
    func engineBatchEnded()
}

/// Dispatches engine events to the owner of each operation, as its ID names it. Each owner registers once; the
/// order of registration does not matter, and an event of an owner nobody registered is dropped. Receivers are held
/// weakly: they own the engine's service, not the other way round.
package final class EngineEventRouter {
    private struct Held {
        weak var receiver: (any EngineEventReceiver)?
    }

    private var receivers: [EngineOperationOwner: Held] = [:]

    package init() {}

    /// Makes `receiver` the one that gets the events of `owner`'s operations (replacing any before it).
    package func register(_ receiver: any EngineEventReceiver, for owner: EngineOperationOwner) {
        receivers[owner] = Held(receiver: receiver)
    }

    /// Delivers `event` to the owner of `operation`; false when no one owns it.
    @discardableResult
    package func route(_ event: OperationEvent, for operation: OperationID) -> Bool {
        guard let owner = EngineOperationOwner(of: operation), let receiver = receivers[owner]?.receiver else {
            return false
        }
        receiver.receive(event, for: operation)
        return true
    }

    /// Tells every receiver that a step's events are all delivered, in a fixed order (the owners' order).
    package func batchEnded() {
        for owner in EngineOperationOwner.allCases { receivers[owner]?.receiver?.engineBatchEnded() }
    }
}
