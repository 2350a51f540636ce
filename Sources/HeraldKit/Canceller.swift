import Synchronization

/// Lets a value type (a browser) cancel the operation it started, from any task.
///
/// `Sendable` without an escape: all state sits in a `Mutex`.
final class Canceller: Sendable {
    /// Held weakly: an operation ends when its iterator goes away, and the browser must not keep it alive.
    private struct Attached {
        weak var operation: DaemonOperation?
    }
    private struct State {
        var operations: [Attached] = []
        var cancelled = false
    }
    private let state = Mutex(State())

    /// Cancels `operation` along with the others if cancellation was already asked for, else remembers it.
    func attach(_ operation: DaemonOperation) {
        let cancelled = state.withLock { state in
            state.operations.removeAll { $0.operation == nil }
            state.operations.append(Attached(operation: operation))
            return state.cancelled
        }
        if cancelled { operation.cancel() }
    }

    /// Cancels every attached operation, now and later.
    func cancel() {
        let operations = state.withLock { state in
            state.cancelled = true
            return state.operations.compactMap(\.operation)
        }
        for operation in operations { operation.cancel() }
    }
}
