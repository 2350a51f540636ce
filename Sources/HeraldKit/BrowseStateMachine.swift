import HeraldIPC

/// Turns one browse operation's events into ``BrowseUpdate``s. Pure: no I/O, no clock.
///
/// The protocol it follows (the daemon's side is the app-socket server):
/// - the request's status: `noError` starts the operation (`ready`), anything else fails it — a static
///   denial is a `noAuth` status, and nothing was started;
/// - a browse reply whose error is `noAuth` parks the operation (`waiting`): either right after a
///   `noError` status (not yet granted), or later, when access is withdrawn — the daemon then forgets what
///   it reported, so everything seen so far is reported removed;
/// - the first reply without an error after that means access was granted: `ready` again, and results
///   follow as usual;
/// - any other error fails the operation;
/// - replies flagged `moreComing` are gathered into one update with the ones after them.
struct BrowseStateMachine {
    private(set) var state: OperationState = .setup
    private(set) var results: Set<BrowseResult> = []
    private var pending: [BrowseChange] = []
    private var updates: [BrowseUpdate] = []
    /// What `waiting` says: the daemon's explanation once it gave one.
    private var parkedReason = OperationState.parkedReason

    /// The updates that `event` causes, in order.
    mutating func handle(_ event: OperationEvent) -> [BrowseUpdate] {
        guard !state.isFinal else { return [] }
        switch event {
        case .started(let status, let replies):
            guard status == .noError else {
                transition(to: .failed(.daemon(status)))
                break
            }
            // A parked operation's NoAuth reply usually arrives with the status: report `waiting` alone then.
            if replies.first?.error == .noAuth {
                handle(replies)
            } else {
                transition(to: .ready)
                handle(replies)
            }
        case .replies(let replies):
            handle(replies)
        case .explained(let text):
            parkedReason = text
        case .failed(let error):
            transition(to: .failed(.connection(error)))
        }
        return takeUpdates()
    }

    /// The update for cancelling the browse (none when it had already ended).
    mutating func cancel() -> [BrowseUpdate] {
        guard !state.isFinal else { return [] }
        transition(to: .cancelled)
        return takeUpdates()
    }

    private mutating func handle(_ replies: [Reply]) {
        var moreComing = false
        for reply in replies where !state.isFinal {
            moreComing = false
            switch reply.error {
            case .noError:
                guard case .browse(let browse) = reply else { continue }
                if state != .ready { transition(to: .ready) }
                moreComing = browse.flags.contains(.moreComing)
                let result = BrowseResult(
                    instance: ServiceInstance(name: browse.name, type: browse.regtype, domain: browse.domain),
                    interfaceIndex: browse.interfaceIndex)
                if browse.flags.contains(.add) {
                    if results.insert(result).inserted { pending.append(.added(result)) }
                } else if results.remove(result) != nil {
                    pending.append(.removed(result))
                }
            case .noAuth:
                guard case .waiting = state else {
                    // Parked (again): what was reported before is no longer seen by this app.
                    pending += results.sorted { $0.description < $1.description }.map { .removed($0) }
                    results.removeAll()
                    transition(to: .waiting(.noAuth, reason: parkedReason))
                    continue
                }
            default:
                transition(to: .failed(.daemon(reply.error)))
            }
        }
        if !moreComing { flush() }
    }

    /// Moves to `state`, reporting the changes gathered so far with it.
    private mutating func transition(to newState: OperationState) {
        guard newState != state else { return }
        state = newState
        updates.append(BrowseUpdate(state: state, changes: pending, results: results))
        pending.removeAll()
    }

    private mutating func flush() {
        guard !pending.isEmpty else { return }
        updates.append(BrowseUpdate(state: state, changes: pending, results: results))
        pending.removeAll()
    }

    private mutating func takeUpdates() -> [BrowseUpdate] {
        defer { updates.removeAll() }
        return updates
    }
}
