import HeraldIPC
import Testing

@testable import HeraldKit

@Suite("A registration's state follows the daemon's status and replies, NoAuth parking included")
struct RegistrationStateMachineTests {
    func registered(_ name: String) -> Reply {
        .registerService(RegisterServiceReply(flags: .add, name: name, regtype: "_tictactoe._tcp.", domain: "local."))
    }

    var parked: Reply {
        .registerService(RegisterServiceReply(error: .noAuth, regtype: "_tictactoe._tcp.", domain: "local."))
    }

    func instance(_ name: String) -> ServiceInstance {
        ServiceInstance(name: name, type: "_tictactoe._tcp.", domain: "local.")
    }

    @Test("an allowed registration stays in setup while probing, then is registered under the name the daemon reports")
    func allowed() {
        var machine = RegistrationStateMachine()
        #expect(machine.handle(.started(status: .noError, replies: [])).isEmpty)
        #expect(machine.state == .setup)
        #expect(machine.handle(.replies([registered("Game (2)")])) == [.registered(instance("Game (2)"))])
    }

    @Test("parked, then granted: waiting, then registered; withdrawn later: waiting again")
    func parkedGrantedRevoked() {
        var machine = RegistrationStateMachine()
        let waiting = RegistrationState.waiting(.noAuth, reason: OperationState.parkedReason)
        #expect(machine.handle(.started(status: .noError, replies: [parked])) == [waiting])
        #expect(machine.handle(.replies([registered("Game")])) == [.registered(instance("Game"))])
        #expect(machine.handle(.replies([parked])) == [waiting])
    }

    @Test("a NoAuth status (static denial) or a conflict fails it; a failed registration stays failed")
    func failures() {
        var denied = RegistrationStateMachine()
        #expect(denied.handle(.started(status: .noAuth, replies: [])) == [.failed(.daemon(.noAuth))])
        #expect(denied.handle(.replies([registered("Game")])).isEmpty)

        var conflict = RegistrationStateMachine()
        _ = conflict.handle(.started(status: .noError, replies: []))
        let reply = Reply.registerService(RegisterServiceReply(error: .nameConflict))
        #expect(conflict.handle(.replies([reply])) == [.failed(.daemon(.nameConflict))])
        #expect(conflict.cancel().isEmpty)
    }
}
