import HeraldClient
import HeraldIPC
import Testing

@testable import HeraldKit

@Suite("A browse's state follows the daemon's status and replies, NoAuth parking included")
struct BrowseStateMachineTests {
    static let type = "_tictactoe._tcp."

    func found(_ name: String, interface: UInt32 = 2, more: Bool = false) -> Reply {
        .browse(
            BrowseReply(
                flags: more ? [.add, .moreComing] : [.add], interfaceIndex: interface, name: name,
                regtype: Self.type, domain: "local."))
    }

    func lost(_ name: String, interface: UInt32 = 2) -> Reply {
        .browse(BrowseReply(flags: [], interfaceIndex: interface, name: name, regtype: Self.type, domain: "local."))
    }

    /// The reply the daemon queues for a parked browse.
    var parked: Reply { .browse(BrowseReply(error: .noAuth, regtype: Self.type, domain: "local.")) }

    func result(_ name: String, interface: UInt32 = 2) -> BrowseResult {
        BrowseResult(
            instance: ServiceInstance(name: name, type: Self.type, domain: "local."), interfaceIndex: interface)
    }

    @Test("an allowed browse is ready, then reports additions and removals")
    func allowed() {
        var machine = BrowseStateMachine()
        #expect(machine.handle(.started(status: .noError, replies: [])).map(\.state) == [.ready])
        let added = machine.handle(.replies([found("Alice")]))
        #expect(added == [BrowseUpdate(state: .ready, changes: [.added(result("Alice"))], results: [result("Alice")])])
        let removed = machine.handle(.replies([lost("Alice")]))
        #expect(removed == [BrowseUpdate(state: .ready, changes: [.removed(result("Alice"))], results: [])])
        // A removal of something never reported changes nothing.
        #expect(machine.handle(.replies([lost("Nobody")])).isEmpty)
    }

    @Test("the daemon's explanation, when it gives one, is the waiting state's reason")
    func explainedWaiting() {
        var machine = BrowseStateMachine()
        #expect(machine.handle(.explained("not-determined: org.example.tictactoe has not been granted")).isEmpty)
        let first = machine.handle(.started(status: .noError, replies: [parked]))
        #expect(
            first.map(\.state) == [
                .waiting(.noAuth, reason: "not-determined: org.example.tictactoe has not been granted")
            ])
        var plain = BrowseStateMachine()
        #expect(
            plain.handle(.started(status: .noError, replies: [parked])).map(\.state)
                == [.waiting(.noAuth, reason: OperationState.parkedReason)])
    }

    @Test(
        "a parked browse (status NoError, then a NoAuth reply) is waiting, never ready, and becomes ready with results once granted"
    )
    func parkedThenGranted() {
        var machine = BrowseStateMachine()
        let first = machine.handle(.started(status: .noError, replies: [parked]))
        #expect(first.map(\.state) == [.waiting(.noAuth, reason: OperationState.parkedReason)])
        #expect(first.allSatisfy { $0.changes.isEmpty })
        // Granted: the daemon starts the operation and results flow.
        let granted = machine.handle(.replies([found("Bob")]))
        #expect(granted.map(\.state) == [.ready, .ready])
        #expect(granted.last?.changes == [.added(result("Bob"))])
        #expect(machine.state == .ready)
    }

    @Test("a NoAuth reply that comes after the status, in its own batch, also parks the browse")
    func parkedLate() {
        var machine = BrowseStateMachine()
        #expect(machine.handle(.started(status: .noError, replies: [])).map(\.state) == [.ready])
        #expect(
            machine.handle(.replies([parked])).map(\.state) == [.waiting(.noAuth, reason: OperationState.parkedReason)])
        #expect(machine.handle(.replies([parked])).isEmpty, "parked twice is one state")
    }

    @Test("access withdrawn while browsing: waiting again, and everything seen is reported removed")
    func revoked() {
        var machine = BrowseStateMachine()
        _ = machine.handle(.started(status: .noError, replies: [found("Alice"), found("Bob", interface: 3)]))
        let updates = machine.handle(.replies([parked]))
        #expect(updates.count == 1)
        #expect(updates.first?.state == .waiting(.noAuth, reason: OperationState.parkedReason))
        #expect(
            Set(updates.first?.changes ?? []) == [.removed(result("Alice")), .removed(result("Bob", interface: 3))])
        #expect(updates.first?.results == [])
        // Granted again: the same instance is new again.
        #expect(machine.handle(.replies([found("Alice")])).last?.changes == [.added(result("Alice"))])
    }

    @Test("a static denial (NoAuth status) fails the browse; later events change nothing")
    func staticDenial() {
        var machine = BrowseStateMachine()
        #expect(machine.handle(.started(status: .noAuth, replies: [])).map(\.state) == [.failed(.daemon(.noAuth))])
        #expect(machine.handle(.replies([found("Alice")])).isEmpty)
        #expect(machine.cancel().isEmpty)
    }

    @Test("replies flagged MoreComing are gathered into one update with the reply that ends the batch")
    func moreComing() {
        var machine = BrowseStateMachine()
        _ = machine.handle(.started(status: .noError, replies: []))
        #expect(machine.handle(.replies([found("A", more: true), found("B", more: true)])).isEmpty)
        let batch = machine.handle(.replies([found("C")]))
        #expect(batch.count == 1)
        #expect(batch.first?.changes == [.added(result("A")), .added(result("B")), .added(result("C"))])
    }

    @Test("the same name on two interfaces is two results")
    func perInterface() {
        var machine = BrowseStateMachine()
        _ = machine.handle(.started(status: .noError, replies: []))
        let updates = machine.handle(.replies([found("A", interface: 2), found("A", interface: 3)]))
        #expect(updates.last?.results == [result("A", interface: 2), result("A", interface: 3)])
    }

    @Test("another error in a reply, or a broken connection, fails the browse")
    func failures() {
        var machine = BrowseStateMachine()
        _ = machine.handle(.started(status: .noError, replies: []))
        let failed = machine.handle(.replies([.browse(BrowseReply(error: .serviceNotRunning))]))
        #expect(failed.map(\.state) == [.failed(.daemon(.serviceNotRunning))])

        var other = BrowseStateMachine()
        _ = other.handle(.started(status: .noError, replies: []))
        #expect(other.handle(.failed(.disconnected)).map(\.state) == [.failed(.connection(.disconnected))])
    }

    @Test("cancelling reports cancelled once")
    func cancelling() {
        var machine = BrowseStateMachine()
        _ = machine.handle(.started(status: .noError, replies: []))
        #expect(machine.cancel().map(\.state) == [.cancelled])
        #expect(machine.cancel().isEmpty)
    }
}
