import Synchronization

/// The shared state of one registration: its state machine, the stream of its states, and the tasks
/// waiting for a state. Fed by the task that reads the operation's events.
///
/// `Sendable` without an escape: mutable state sits in a `Mutex`; the stream continuation is `Sendable`.
final class RegistrationCore: Sendable {
    private struct Waiter {
        var condition: @Sendable (RegistrationState) -> Bool
        var continuation: CheckedContinuation<RegistrationState, Never>
    }
    private struct Inner {
        var machine = RegistrationStateMachine()
        var waiters: [UInt64: Waiter] = [:]
        var cancelledWaiters: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }
    private let inner = Mutex(Inner())
    private let continuation: AsyncStream<RegistrationState>.Continuation
    let states: AsyncStream<RegistrationState>

    init() {
        (states, continuation) = AsyncStream.makeStream(of: RegistrationState.self, bufferingPolicy: .unbounded)
    }

    var state: RegistrationState { inner.withLock { $0.machine.state } }

    /// Applies an event of the operation.
    func apply(_ event: OperationEvent) {
        update { $0.handle(event) }
    }

    /// Marks the registration withdrawn (when it had not ended otherwise).
    func cancel() {
        update { $0.cancel() }
    }

    /// Waits until the state satisfies `condition` or is final, or the task is cancelled; returns the state.
    func wait(until condition: @escaping @Sendable (RegistrationState) -> Bool) async -> RegistrationState {
        let id = inner.withLock { inner in
            defer { inner.nextWaiter += 1 }
            return inner.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<RegistrationState, Never>) in
                let current: RegistrationState? = inner.withLock { inner in
                    let state = inner.machine.state
                    if condition(state) || state.isFinal || inner.cancelledWaiters.remove(id) != nil { return state }
                    inner.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let current { continuation.resume(returning: current) }
            }
        } onCancel: {
            let (waiter, state) = inner.withLock { inner in
                let waiter = inner.waiters.removeValue(forKey: id)
                if waiter == nil { inner.cancelledWaiters.insert(id) }
                return (waiter, inner.machine.state)
            }
            waiter?.continuation.resume(returning: state)
        }
    }

    private func update(_ step: (inout RegistrationStateMachine) -> [RegistrationState]) {
        let (states, woken) = inner.withLock { inner -> ([RegistrationState], [(Waiter, RegistrationState)]) in
            let states = step(&inner.machine)
            var woken: [(Waiter, RegistrationState)] = []
            for state in states {
                for (id, waiter) in inner.waiters where waiter.condition(state) || state.isFinal {
                    inner.waiters[id] = nil
                    woken.append((waiter, state))
                }
            }
            return (states, woken)
        }
        for state in states {
            continuation.yield(state)
            if state.isFinal { continuation.finish() }
        }
        for (waiter, state) in woken { waiter.continuation.resume(returning: state) }
    }
}
