import HeraldBroker
import Testing

@Suite("The cgroups the ingress program is attached to")
struct IngressTargetsTests {
    static let tree = [
        "init.scope", "system.slice", "system.slice/cast.service", "system.slice/heraldd.service",
        "system.slice/ssh.service", "system.slice/tictactoe.service", "system.slice/tictactoe.service/worker",
        "user.slice", "user.slice/user-1000.slice", "user.slice/user-1000.slice/user@1000.service",
        "user.slice/user-1000.slice/user@1000.service/app.slice",
        "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope",
        "user.slice/user-1000.slice/user@1000.service/app.slice/app-shell.scope",
    ]

    static func input(_ mode: EnforcementMode, printerMulticast: Bool = false) -> EnforcementInput {
        EnforcementInput(
            mode: mode,
            apps: [
                EnforcedApp(
                    id: "org.example.tictactoe", granted: false, multicast: false,
                    cgroups: ["system.slice/tictactoe.service"]),
                EnforcedApp(
                    id: "org.example.printer", granted: true, multicast: printerMulticast,
                    cgroups: ["user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope"]),
                EnforcedApp(
                    id: "org.example.cast", granted: true, multicast: true, cgroups: ["system.slice/cast.service"]),
            ],
            networks: LocalNetworks(addresses: []),
            exemptCgroups: ["system.slice/heraldd.service", "system.slice/ssh.service"])
    }

    @Test("registered: the cgroups of apps not granted, or granted without the multicast entitlement")
    func registered() {
        #expect(
            IngressTargets.targets(for: Self.input(.registered), cgroups: Self.tree) == [
                "system.slice/tictactoe.service",
                "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope",
            ])
        #expect(
            IngressTargets.targets(for: Self.input(.registered, printerMulticast: true), cgroups: Self.tree) == [
                "system.slice/tictactoe.service"
            ])
        #expect(IngressTargets.targets(for: Self.input(.off), cgroups: Self.tree).isEmpty)
    }

    @Test("all: the highest cgroups neither at, below nor above one that keeps receiving, and the root's own sockets")
    func all() {
        // system.slice holds heraldd, ssh and cast, which keep receiving: its other children are targets, not it.
        // "" is the root cgroup's own processes, judged by a program of their own attached at the root.
        #expect(
            IngressTargets.targets(for: Self.input(.all), cgroups: Self.tree) == [
                "", "init.scope", "system.slice/tictactoe.service", "user.slice",
            ])
        // The printer granted with the entitlement: the program moves down to its siblings and its parents'.
        #expect(
            IngressTargets.targets(for: Self.input(.all, printerMulticast: true), cgroups: Self.tree) == [
                "", "init.scope", "system.slice/tictactoe.service",
                "user.slice/user-1000.slice/user@1000.service/app.slice/app-shell.scope",
            ])
    }

    @Test("A cgroup named by a granted app with the entitlement keeps receiving, also below it")
    func mostOpenWins() {
        var input = Self.input(.registered)
        input.apps.append(
            EnforcedApp(
                id: "org.example.worker", granted: false, multicast: false,
                cgroups: ["system.slice/cast.service", "system.slice/cast.service/child"]))
        #expect(
            IngressTargets.targets(for: input, cgroups: Self.tree) == [
                "system.slice/tictactoe.service",
                "user.slice/user-1000.slice/user@1000.service/app.slice/app-printer.scope",
            ])
    }
}
