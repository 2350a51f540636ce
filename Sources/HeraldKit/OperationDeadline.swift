import Synchronization

/// Ends a one-shot operation at a deadline that may be brought forward (to stop collecting answers a short
/// while after the first one).
///
/// `Sendable` without an escape: all state sits in a `Mutex`.
final class OperationDeadline: Sendable {
    private struct State {
        var due: ContinuousClock.Instant
        var fired = false
    }
    private let state: Mutex<State>

    init(after timeout: Duration) {
        state = Mutex(State(due: .now + timeout))
    }

    /// True once the deadline passed and cancelled the operation.
    var fired: Bool { state.withLock { $0.fired } }

    /// Moves the deadline to `instant` when that is earlier.
    func bringForward(to instant: ContinuousClock.Instant) {
        state.withLock { $0.due = min($0.due, instant) }
    }

    /// Watches the deadline and cancels `operation` when it passes; cancel the returned task once the
    /// operation is over.
    func watch(_ operation: DaemonOperation) -> Task<Void, Never> {
        Task { [self] in
            while !Task.isCancelled {
                let due = state.withLock { $0.due }
                if ContinuousClock.now >= due {
                    state.withLock { $0.fired = true }
                    operation.cancel()
                    return
                }
                try? await Task.sleep(until: due, clock: .continuous)
            }
        }
    }
}
