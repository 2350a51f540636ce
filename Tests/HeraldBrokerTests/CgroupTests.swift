import HeraldBroker
import Testing

@Suite("Reading the systemd unit from /proc/PID/cgroup")
struct CgroupTests {
    @Test("A system service on cgroup v2")
    func systemService() {
        #expect(
            SystemdUnit.parse(procCgroup: "0::/system.slice/tictactoe.service\n")
                == SystemdUnit(name: "tictactoe.service", manager: .system))
    }

    @Test("An app scope under a user's manager names the scope and the user")
    func userScope() {
        let text = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.scope\n"
        #expect(SystemdUnit.parse(procCgroup: text) == SystemdUnit(name: "app-foo.scope", manager: .user(uid: 1000)))
    }

    @Test(
        "Units and slices nested as systemd lays them out",
        arguments: [
            ("/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service", nil),
            ("/user.slice/user-1000.slice/session-3.scope", "session-3.scope", nil),
            ("/user.slice/user-1000.slice/user@1000.service/init.scope", "init.scope", 1000),
            ("/user.slice/user-1000.slice/user@1000.service/session.slice/dbus.service", "dbus.service", 1000),
            ("/user.slice/user-1000.slice/user@1000.service", "user@1000.service", nil),
            ("/init.scope", "init.scope", nil),
            ("/system.slice/_cpu.service", "cpu.service", nil),
            ("/system.slice/tictactoe.service/worker", "tictactoe.service", nil),
        ] as [(String, String, UInt32?)])
    func layouts(path: String, unit: String, user: UInt32?) {
        #expect(
            SystemdUnit(cgroupPath: path) == SystemdUnit(name: unit, manager: user.map { .user(uid: $0) } ?? .system))
    }

    @Test("A cgroup a delegated service made up proves nothing: the unit is the service that owns it")
    func delegatedSubtreeCannotImpersonate() {
        #expect(
            SystemdUnit(cgroupPath: "/system.slice/docker.service/tictactoe.service")
                == SystemdUnit(name: "docker.service"))
        #expect(
            SystemdUnit(cgroupPath: "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service/evil.service")
                == SystemdUnit(name: "foo.service", manager: .user(uid: 1000)))
    }

    @Test(
        "Paths outside systemd's layout, the root, and removed cgroups have no unit",
        arguments: [
            "/", "", "/lxc.payload.c1/tictactoe.service", "/system.slice", "/system.slice/tictactoe.service (deleted)",
        ])
    func noUnit(path: String) {
        #expect(SystemdUnit(cgroupPath: path) == nil)
    }

    @Test("On a hybrid or legacy hierarchy the name=systemd line is used")
    func legacyHierarchy() {
        let hybrid = """
            12:memory:/system.slice/tictactoe.service
            1:name=systemd:/system.slice/tictactoe.service
            0::/
            """
        #expect(SystemdUnit.parse(procCgroup: hybrid) == SystemdUnit(name: "tictactoe.service"))
        let unified = """
            1:name=systemd:/system.slice/old.service
            0::/system.slice/tictactoe.service
            """
        #expect(SystemdUnit.parse(procCgroup: unified) == SystemdUnit(name: "tictactoe.service"))
        #expect(SystemdUnit.parse(procCgroup: "garbage\n\n") == nil)
    }

    @Test("A selector with '*' matches the scopes desktops and Flatpak name after the app, of the right manager")
    func globSelectors() {
        let gnome = SystemdUnit(name: "app-gnome-tictactoe-4242.scope", manager: .user(uid: 1000))
        #expect(gnome.matches(selector: "user:app-*-tictactoe-*.scope"))
        #expect(!gnome.matches(selector: "app-*-tictactoe-*.scope"), "a user's scope never matches a system selector")
        #expect(!gnome.matches(selector: "user:app-*-tictactoe-*.service"))
        #expect(!gnome.matches(selector: "user:app-*-chess-*.scope"))
        let flatpak = SystemdUnit(name: "app-flatpak-org.example.Game-77.scope", manager: .user(uid: 1000))
        #expect(flatpak.matches(selector: "user:app-flatpak-org.example.Game-*.scope"))
        #expect(!flatpak.matches(selector: "user:app-flatpak-org.example.GameX-*.scope"))
        #expect(SystemdUnit(name: "tictactoe-worker.service").matches(selector: "tictactoe-*.service"))
        #expect(SystemdUnit(name: "tictactoe-.service").matches(selector: "tictactoe-*.service"), "'*' may be empty")
        #expect(!SystemdUnit(name: "tictactoe.service").matches(selector: "tictactoe-*.service"))
    }

    @Test("Unit selectors match the same name, or a template of an instance")
    func selectors() {
        let instance = SystemdUnit(name: "game@alice.service")
        #expect(instance.matches(selector: "game@alice.service"))
        #expect(instance.matches(selector: "game@.service"))
        #expect(!instance.matches(selector: "game.service"))
        #expect(!instance.matches(selector: "gam@.service"))
        #expect(!SystemdUnit(name: "game@alice.scope").matches(selector: "game@.service"))
        #expect(!SystemdUnit(name: "tictactoe.service").matches(selector: "TicTacToe.service"))
        // A user names their own manager's units freely: a plain selector names the system's unit only, and a
        // user's unit matches only a selector that asks for one.
        let usersScope = SystemdUnit(name: "app-foo.scope", manager: .user(uid: 1000))
        #expect(!usersScope.matches(selector: "app-foo.scope"))
        #expect(usersScope.matches(selector: "user:app-foo.scope"))
        #expect(!SystemdUnit(name: "app-foo.scope").matches(selector: "user:app-foo.scope"))
        #expect(
            SystemdUnit(name: "game@bob.service", manager: .user(uid: 1001)).matches(selector: "user:game@.service"))
    }
}
