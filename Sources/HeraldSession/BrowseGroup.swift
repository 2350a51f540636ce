import HeraldEngine
import HeraldWire

/// The running browses of one service type on one interface (or on all), whichever clients they belong to.
///
/// They share one engine operation and one record of what is present, the way mDNSResponder merges equal
/// questions: an instance appearing is counted once for the group and its reply built once, then queued for each
/// member. A browse that joins a group already running is told at once what the group knows, as a new engine
/// operation would have been told from the cache.
final class BrowseGroup {
    /// The type as the browses spelled it, and their interface. Types compare ignoring case, but each browse's
    /// replies name the type as it asked for it, so only browses that spelled it alike share a group.
    struct Key: Hashable {
        var type: ServiceType
        /// The interface the browses are limited to; nil for all.
        var interface: Int?

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.interface == rhs.interface && lhs.type.description == rhs.type.description
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(interface)
            hasher.combine(type.description)
        }
    }

    let key: Key
    let engineOperation: OperationID
    /// The member browses, in the order they joined.
    private(set) var members: [(connection: ConnectionID, operation: SessionOperation)] = []
    /// Which links of an interface report each instance (see `SessionOperation.presence`).
    var presence: [PresenceKey: Int] = [:]

    init(key: Key, engineOperation: OperationID) {
        self.key = key
        self.engineOperation = engineOperation
    }

    var isEmpty: Bool { members.isEmpty }

    func add(_ operation: SessionOperation, of connection: ConnectionID) {
        members.append((connection, operation))
        operation.group = self
    }

    func remove(_ operation: SessionOperation) {
        members.removeAll { $0.operation === operation }
        operation.group = nil
    }

    /// The instances present now, per interface (and family, when reported), in a stable order (interface, then
    /// name, then family).
    var presentInstances: [PresenceKey] {
        presence.keys.sorted {
            ($0.interface, $0.name ?? .root, $0.family?.rawValue ?? "") < (
                $1.interface, $1.name ?? .root, $1.family?.rawValue ?? ""
            )
        }
    }
}
