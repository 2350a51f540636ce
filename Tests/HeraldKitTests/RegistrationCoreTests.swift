import HeraldIPC
import Testing

@testable import HeraldKit

@Suite("Tasks waiting on a registration's state")
struct RegistrationCoreTests {
    func registered(_ name: String) -> OperationEvent {
        .replies([
            .registerService(RegisterServiceReply(flags: .add, name: name, regtype: "_game._tcp.", domain: "local."))
        ])
    }

    @Test("a task waiting for registration is woken by the reply that registers it, through a parked phase")
    func wokenByRegistration() async {
        let core = RegistrationCore()
        let waiter = Task { await core.wait { if case .registered = $0 { return true } else { return false } } }
        core.apply(.started(status: .noError, replies: [.registerService(RegisterServiceReply(error: .noAuth))]))
        core.apply(registered("Game"))
        let state = await waiter.value
        #expect(state == .registered(ServiceInstance(name: "Game", type: "_game._tcp.", domain: "local.")))
        // Every state is also streamed, in order.
        var streamed: [RegistrationState] = []
        core.cancel()
        for await state in core.states { streamed.append(state) }
        #expect(streamed.count == 3)
        #expect(streamed.first == .waiting(.noAuth, reason: OperationState.parkedReason))
        #expect(streamed.last == .cancelled)
    }

    @Test("a failure wakes a waiter with the failure; a later waiter gets it at once")
    func wokenByFailure() async {
        let core = RegistrationCore()
        let waiter = Task { await core.wait { if case .registered = $0 { return true } else { return false } } }
        core.apply(.started(status: .noAuth, replies: []))
        #expect(await waiter.value == .failed(.daemon(.noAuth)))
        #expect(await core.wait { _ in false } == .failed(.daemon(.noAuth)))
    }

    @Test("a waiting task that is cancelled stops waiting, whether it was cancelled before or after it began to wait")
    func cancelledWaiter() async {
        let core = RegistrationCore()
        let waiter = Task { await core.wait { _ in false } }
        waiter.cancel()
        #expect(await waiter.value == .setup)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await core.wait { _ in false }
        }
        #expect(await cancelledFirst.value == .setup)
    }
}
