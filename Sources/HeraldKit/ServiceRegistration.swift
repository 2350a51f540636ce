/// A service advertised through the daemon, for as long as this handle lives.
///
/// The service is withdrawn — the daemon sends goodbye packets, and peers see it go — when ``cancel()`` is
/// called, when the last reference to the handle goes away, or when the scope of
/// ``Herald/withRegistration(_:body:)`` ends, task cancellation included.
public final class ServiceRegistration: Sendable {
    /// What was asked to be advertised.
    public let advertisement: ServiceAdvertisement
    private let operation: DaemonOperation
    private let core: RegistrationCore

    init(_ advertisement: ServiceAdvertisement, operation: DaemonOperation) {
        self.advertisement = advertisement
        self.operation = operation
        let core = RegistrationCore()
        self.core = core
        let events = operation.events
        Task {
            for await event in events { core.apply(event) }
            // The operation ended without a final state: it was cancelled.
            core.cancel()
        }
    }

    deinit {
        operation.cancel()
    }

    /// The current state.
    public var state: RegistrationState { core.state }

    /// Every state the registration goes through, from the first, ending after a final one. One consumer.
    public var states: AsyncStream<RegistrationState> { core.states }

    /// The instance as registered (after any rename), once it is.
    public var instance: ServiceInstance? {
        if case .registered(let instance) = state { return instance }
        return nil
    }

    /// Waits until the service is advertised (through any `waiting` for permission) and returns the name
    /// it got; throws the error it failed with, or `CancellationError`.
    public func registered() async throws -> ServiceInstance {
        let state = await core.wait { if case .registered = $0 { return true } else { return false } }
        switch state {
        case .registered(let instance): return instance
        case .failed(let error): throw error
        default:
            try Task.checkCancellation()
            throw CancellationError()
        }
    }

    /// Withdraws the service (goodbyes are sent by the daemon). Safe to call twice.
    public func cancel() {
        core.cancel()
        operation.cancel()
    }

    /// Waits for the first state after `setup` (registered, waiting, or failed).
    func settled() async -> RegistrationState {
        await core.wait { $0 != .setup }
    }
}
