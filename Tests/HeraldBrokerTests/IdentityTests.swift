import Foundation
import HeraldBroker
import Testing

@Suite("Recognising an app's processes")
struct IdentityTests {
    static let digest = SHA256.hash(Array("tictactoe 1.0".utf8))
    static let pinned = try! Manifest(
        id: "org.example.tictactoe", name: "Tic Tac Toe",
        executables: ["/usr/bin/tictactoe", "/usr/bin/tictactoe-cli"],
        executableSHA256: ["/usr/bin/tictactoe": digest.hex], bonjourServices: ["_tictactoe._tcp"],
        usageDescription: "Finds players.")

    @Test("A pinned executable matches only with the pinned content")
    func pinnedExecutable() {
        let registry = ManifestRegistry([Self.pinned])
        #expect(registry.match(caller("/usr/bin/tictactoe", sha256: Self.digest))?.manifest.id == Self.pinned.id)
        #expect(registry.match(caller("/usr/bin/tictactoe", sha256: SHA256.hash(Array("evil".utf8)))) == nil)
        #expect(registry.match(caller("/usr/bin/tictactoe")) == nil, "no digest computed: no match")
        // The other path of the same manifest is not pinned.
        #expect(registry.match(caller("/usr/bin/tictactoe-cli"))?.selectors == [.executable("/usr/bin/tictactoe-cli")])
        #expect(registry.needsDigest(forExecutable: "/usr/bin/tictactoe"))
        #expect(!registry.needsDigest(forExecutable: "/usr/bin/tictactoe-cli"))
    }

    @Test("Executable paths compare exactly, as the kernel reports them")
    func exactPaths() {
        let registry = ManifestRegistry([Apps.ticTacToe])
        #expect(registry.match(caller("/usr/bin/tictactoe")) != nil)
        #expect(registry.match(caller("/usr/bin/TicTacToe")) == nil)
        #expect(registry.match(caller("/usr/local/bin/tictactoe")) == nil)
        #expect(registry.match(CallerIdentity(uid: 1000, executablePath: nil)) == nil)
    }

    @Test("When an app's binary runs in another app's unit, the unit decides; both selectors beat either")
    func precedence() throws {
        let launcher = try Manifest(
            id: "org.example.launcher", name: "Launcher", systemdUnits: ["launcher.service"],
            bonjourServices: ["_launch._tcp"], usageDescription: "Launches.")
        let registry = ManifestRegistry([Apps.ticTacToe, launcher])
        let inLauncher = caller("/usr/bin/tictactoe", unit: SystemdUnit(name: "launcher.service"))
        #expect(registry.matches(inLauncher).map(\.manifest.id) == [launcher.id, Apps.ticTacToe.id])
        let inOwnUnit = caller("/usr/bin/tictactoe", unit: SystemdUnit(name: "tictactoe.service"))
        #expect(
            registry.match(inOwnUnit)?.selectors == [
                .executable("/usr/bin/tictactoe"), .systemdUnit("tictactoe.service"),
            ])
    }

    @Test("Registering a selector that another app claims is a conflict")
    func conflicts() throws {
        let registry = ManifestRegistry(Apps.all)
        let clash = try Manifest(
            id: "org.example.clash", name: "Clash", executables: ["/usr/bin/chat"],
            systemdUnits: ["tictactoe.service"], usageDescription: "x")
        #expect(
            Set(registry.conflicts(with: clash).map(\.description)) == [
                "executable /usr/bin/chat is already claimed by org.example.chat",
                "systemd unit tictactoe.service is already claimed by org.example.tictactoe",
            ])
        // The same app may re-register its own selectors.
        #expect(registry.conflicts(with: Apps.ticTacToe).isEmpty)
        // A template overlaps with its instances.
        let templated = ManifestRegistry([
            try Manifest(id: "org.example.game", name: "Game", systemdUnits: ["game@.service"])
        ])
        let instance = try Manifest(id: "org.example.alice", name: "Alice", systemdUnits: ["game@alice.service"])
        #expect(templated.conflicts(with: instance).count == 1)
        // A pattern with '*' overlaps with the names it matches, and with the same or a wider pattern.
        let desktop = ManifestRegistry([
            try Manifest(id: "org.example.game", name: "Game", systemdUnits: ["user:app-*-tictactoe-*.scope"])
        ])
        for (unit, overlaps) in [
            ("user:app-gnome-tictactoe-7.scope", true), ("user:app-*-tictactoe-*.scope", true),
            ("user:app-*.scope", true), ("user:app-*-chess-*.scope", false), ("app-gnome-tictactoe-7.scope", false),
            ("user:app-*-tictactoe-*.service", false),
        ] {
            let other = try Manifest(id: "org.example.other", name: "Other", systemdUnits: [unit])
            #expect(desktop.conflicts(with: other).isEmpty == !overlaps, "\(unit)")
        }
    }

    @Test("The registry keeps one manifest per id, ordered by id")
    func registryIDs() throws {
        var registry = ManifestRegistry([Apps.ticTacToe, Apps.chat])
        #expect(registry.manifests.map(\.id.rawValue) == ["org.example.chat", "org.example.tictactoe"])
        let renamed = try Manifest(
            id: "Org.Example.TicTacToe", name: "Tic Tac Toe 2", executables: ["/usr/bin/tictactoe"])
        registry.insert(renamed)
        #expect(registry.manifests.count == 2)
        #expect(registry[Apps.ticTacToe.id]?.name == "Tic Tac Toe 2")
        #expect(registry.remove(Apps.chat.id) == Apps.chat)
        #expect(registry.remove(Apps.chat.id) == nil)
    }

    @Test("The kernel's executable link is split from its deleted marker")
    func executableLink() {
        #expect(
            ExecutableLink(linkTarget: "/usr/bin/tictactoe (deleted)")
                == ExecutableLink(path: "/usr/bin/tictactoe", isDeleted: true))
        #expect(ExecutableLink(linkTarget: "/usr/bin/tictactoe") == ExecutableLink(path: "/usr/bin/tictactoe"))
    }
}

@Suite("Inspecting processes through a /proc tree")
struct ProcessInspectorTests {
    /// A fake `/proc/4242` with an executable link, a cgroup and a status file.
    func fakeProc(in directory: String, executable: String, cgroup: String) throws -> ProcessInspector {
        let process = directory + "/proc/4242"
        try FileManager.default.createDirectory(atPath: process, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: process + "/exe", withDestinationPath: executable)
        try cgroup.write(toFile: process + "/cgroup", atomically: true, encoding: .utf8)
        try """
        Name:\ttictactoe
        Uid:\t1000\t1000\t1000\t1000
        Gid:\t1000\t1000\t1000\t1000
        Groups:\t24 977 1000
        """.write(toFile: process + "/status", atomically: true, encoding: .utf8)
        return ProcessInspector(procRoot: directory + "/proc")
    }

    @Test("The identity of a process comes from its exe link, status and cgroup")
    func identity() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let binary = directory + "/tictactoe"
        try Data("#!/bin/true\nversion 1\n".utf8).write(to: URL(fileURLWithPath: binary))
        let inspector = try fakeProc(
            in: directory, executable: binary,
            cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-tictactoe.scope\n")
        let identity = try inspector.identity(of: 4242, uid: 1000, needsDigest: { $0 == binary })
        #expect(identity.executable == ExecutableLink(path: binary))
        #expect(identity.groups == [1000, 24, 977])
        #expect(identity.systemdUnit == SystemdUnit(name: "app-tictactoe.scope", manager: .user(uid: 1000)))
        #expect(identity.executableSHA256 == SHA256.hash(Array("#!/bin/true\nversion 1\n".utf8)))
        #expect(try inspector.identity(of: 4242, uid: 1000).executableSHA256 == nil, "computed only when needed")
    }

    @Test("A path that names another file for the host than the one the process runs is marked, and never hashed")
    func pathNamingAnotherFile() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        // The process runs `mounted`, which its own mount namespace shows at /usr/bin/tictactoe; for the host (PID 1's
        // root) that path is the real app.
        let mounted = directory + "/mounted"
        try Data("#!/bin/true\nstranger\n".utf8).write(to: URL(fileURLWithPath: mounted))
        let inspector = try fakeProc(in: directory, executable: mounted, cgroup: "0::/user.slice\n")
        let hostRoot = directory + "/proc/1/root"
        try FileManager.default.createDirectory(atPath: hostRoot + directory, withIntermediateDirectories: true)
        try Data("#!/bin/true\nthe app\n".utf8).write(to: URL(fileURLWithPath: hostRoot + mounted))
        let identity = try inspector.identity(of: 4242, uid: 1000, needsDigest: { _ in true })
        #expect(identity.executable == ExecutableLink(path: mounted, namesAnotherFile: true))
        #expect(identity.executable?.namesRunningFile == false)
        #expect(identity.executableSHA256 == nil)
        // The same file in the host's view: recognised.
        try FileManager.default.removeItem(atPath: hostRoot + mounted)
        try FileManager.default.createSymbolicLink(atPath: hostRoot + mounted, withDestinationPath: mounted)
        #expect(try inspector.executable(of: 4242) == ExecutableLink(path: mounted))
    }

    @Test("A deleted executable is reported as such and not hashed")
    func deletedExecutable() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let inspector = try fakeProc(
            in: directory, executable: "/usr/bin/tictactoe (deleted)",
            cgroup: "0::/system.slice/tictactoe.service\n")
        let identity = try inspector.identity(of: 4242, uid: 1000, needsDigest: { _ in true })
        #expect(identity.executable == ExecutableLink(path: "/usr/bin/tictactoe", isDeleted: true))
        #expect(identity.executableSHA256 == nil)
        #expect(identity.systemdUnit == SystemdUnit(name: "tictactoe.service"))
    }

    @Test("A process that is gone cannot be inspected")
    func goneProcess() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let inspector = ProcessInspector(procRoot: directory)
        #expect(throws: ProcessInspectionError.self) { try inspector.identity(of: 99, uid: 1000) }
        #expect(throws: ProcessInspectionError.self) { try inspector.executable(of: 99) }
    }

    @Test("The real /proc describes this test process")
    func realProc() throws {
        let pid = ProcessInfo.processInfo.processIdentifier
        let identity = try ProcessInspector.system.identity(of: pid, uid: UInt32(getuid()))
        #expect(identity.executable?.path.isEmpty == false)
        #expect(identity.groups.first == UInt32(getgid()))
    }

    @Test("Status lines give the effective uid and the groups, primary first")
    func status() {
        let parsed = ProcessInspector.parseStatus("Uid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t100\nGroups:\t100 27\n")
        #expect(parsed?.uid == 0)
        #expect(parsed?.groups == [100, 27])
        #expect(ProcessInspector.parseStatus("Name:\tx\n") == nil)
    }
}

@Suite("SHA-256")
struct SHA256Tests {
    @Test(
        "FIPS 180-4 and NIST test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "The quick brown fox jumps over the lazy dog",
                "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
            ),
        ])
    func vectors(message: String, digest: String) {
        #expect(SHA256.hash(Array(message.utf8)).hex == digest)
    }

    @Test("A million a's, fed in uneven pieces")
    func millionAs() {
        var hasher = SHA256()
        var remaining = 1_000_000
        var piece = 1
        while remaining > 0 {
            let count = min(piece, remaining)
            hasher.update([UInt8](repeating: UInt8(ascii: "a"), count: count))
            remaining -= count
            piece = piece * 3 % 1000 + 1
        }
        #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Digests parse from hex in either case and nothing else")
    func hexParsing() {
        let text = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
        #expect(SHA256Digest(hex: text) == SHA256.hash(Array("abc".utf8)))
        #expect(SHA256Digest(hex: String(text.dropLast())) == nil)
        #expect(SHA256Digest(hex: String(text.dropLast()) + "g") == nil)
    }
}
