/// A service instance seen by a browse, on one interface.
public struct BrowseResult: Hashable, Sendable, CustomStringConvertible {
    /// The instance seen.
    public var instance: ServiceInstance
    /// The system's index of the interface it was seen on (`if_nametoindex`).
    public var interfaceIndex: UInt32

    /// A result for `instance` seen on the interface with index `interfaceIndex`.
    public init(instance: ServiceInstance, interfaceIndex: UInt32) {
        self.instance = instance
        self.interfaceIndex = interfaceIndex
    }

    public var description: String { "\(instance) on interface \(interfaceIndex)" }
}

/// One change to what a browse sees.
public enum BrowseChange: Hashable, Sendable, CustomStringConvertible {
    /// The instance appeared on the interface.
    case added(BrowseResult)
    /// The instance disappeared from the interface (goodbye, expiry, or access withdrawn).
    case removed(BrowseResult)

    /// The result the change is about.
    public var result: BrowseResult {
        switch self {
        case .added(let result), .removed(let result): return result
        }
    }

    public var description: String {
        switch self {
        case .added(let result): return "+ \(result)"
        case .removed(let result): return "- \(result)"
        }
    }
}

/// What a browse reports: a new state, or a batch of changes, with everything currently seen.
public struct BrowseUpdate: Hashable, Sendable {
    /// The browse's state after this update.
    public var state: OperationState
    /// The changes of this update, in the order the daemon reported them (empty for a state change).
    public var changes: [BrowseChange]
    /// Everything the browse sees after this update.
    public var results: Set<BrowseResult>

    /// An update with the given state, changes and results.
    public init(state: OperationState, changes: [BrowseChange], results: Set<BrowseResult>) {
        self.state = state
        self.changes = changes
        self.results = results
    }
}
