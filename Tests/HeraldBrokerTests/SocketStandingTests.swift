import HeraldBroker
import Testing

@Suite("The standing of a cgroup's sockets, as the moved-socket programs compare it")
struct SocketStandingTests {
    static let tree = IngressTargetsTests.tree
    static let printer = "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope"

    @Test("registered: apps held back stand held, granted without multicast groups-held, everyone else open")
    func registered() {
        let input = IngressTargetsTests.input(.registered)
        #expect(SocketStanding.of("system.slice/tictactoe.service", in: input) == .held)
        #expect(SocketStanding.of("system.slice/tictactoe.service/worker", in: input) == .held)
        #expect(SocketStanding.of(Self.printer, in: input) == .groupsHeld)
        #expect(SocketStanding.of("system.slice/cast.service", in: input) == .open)
        #expect(SocketStanding.of("user.slice", in: input) == .open)
        #expect(SocketStanding.of("", in: input) == .open)
        #expect(SocketStanding.fallback(for: .registered) == .open)
        #expect(
            SocketStanding.entries(for: input, cgroups: Self.tree) == [
                "system.slice/tictactoe.service": .held, "system.slice/tictactoe.service/worker": .held,
                Self.printer: .groupsHeld,
            ])
        let entitled = IngressTargetsTests.input(.registered, printerMulticast: true)
        #expect(SocketStanding.of(Self.printer, in: entitled) == .open)
    }

    @Test("all: everyone stands held but exempted units and granted apps; the map lists only those")
    func all() {
        let input = IngressTargetsTests.input(.all)
        #expect(SocketStanding.of("user.slice/user-1000.slice", in: input) == .held)
        #expect(SocketStanding.of("", in: input) == .held)
        #expect(SocketStanding.of("system.slice/heraldd.service", in: input) == .open)
        #expect(SocketStanding.fallback(for: .all) == .held)
        #expect(
            SocketStanding.entries(for: input, cgroups: Self.tree) == [
                "system.slice/cast.service": .open, "system.slice/heraldd.service": .open,
                "system.slice/ssh.service": .open, Self.printer: .groupsHeld,
            ])
    }

    @Test("off: nothing is held back, so nothing is listed")
    func off() {
        let input = IngressTargetsTests.input(.off)
        #expect(SocketStanding.of("system.slice/tictactoe.service", in: input) == .open)
        #expect(SocketStanding.entries(for: input, cgroups: Self.tree).isEmpty)
    }

    @Test("A cgroup named by a granted app and by one held back follows the most open, as the rules do")
    func mostOpenWins() {
        var input = IngressTargetsTests.input(.registered)
        input.apps.append(
            EnforcedApp(id: "org.example.helper", granted: false, multicast: false, cgroups: [Self.printer]))
        #expect(SocketStanding.of(Self.printer, in: input) == .groupsHeld)
        #expect(SocketStanding.held > .groupsHeld && SocketStanding.groupsHeld > .open)
    }
}
