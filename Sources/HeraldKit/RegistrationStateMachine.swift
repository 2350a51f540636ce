import HeraldIPC

/// Turns one registration's events into states. Pure: no I/O, no clock.
///
/// A `noError` status starts the registration (the daemon probes, then answers `add` with the name it
/// registered); another status fails it. A `noAuth` reply parks it (`waiting`), also after it was
/// registered (access withdrawn: the daemon said goodbye); the next `add` reply means it is registered
/// again. Other errors (a conflict without renaming) fail it.
struct RegistrationStateMachine {
    private(set) var state: RegistrationState = .setup
    /// What `waiting` says: the daemon's explanation once it gave one.
    private var parkedReason = OperationState.parkedReason

    /// The states `event` leads to, in order (only changes).
    mutating func handle(_ event: OperationEvent) -> [RegistrationState] {
        guard !state.isFinal else { return [] }
        var states: [RegistrationState] = []
        func move(to newState: RegistrationState) {
            guard newState != state else { return }
            state = newState
            states.append(newState)
        }
        let replies: [Reply]
        switch event {
        case .started(let status, let first):
            guard status == .noError else {
                move(to: .failed(.daemon(status)))
                return states
            }
            replies = first
        case .replies(let more):
            replies = more
        case .explained(let text):
            parkedReason = text
            return states
        case .failed(let error):
            move(to: .failed(.connection(error)))
            return states
        }
        for reply in replies where !state.isFinal {
            switch reply.error {
            case .noError:
                guard case .registerService(let registered) = reply, registered.flags.contains(.add) else { continue }
                move(
                    to: .registered(
                        ServiceInstance(name: registered.name, type: registered.regtype, domain: registered.domain)))
            case .noAuth:
                move(to: .waiting(.noAuth, reason: parkedReason))
            default:
                move(to: .failed(.daemon(reply.error)))
            }
        }
        return states
    }

    /// The state for withdrawing the registration (none when it had already ended).
    mutating func cancel() -> [RegistrationState] {
        guard !state.isFinal else { return [] }
        state = .cancelled
        return [.cancelled]
    }
}
