import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Ways an app might try to get past the permission broker, each one a test, all denied. The fixture is a real
/// heraldd with a real store in which the tic-tac-toe app is registered and **granted**, so that every denial
/// below is the rule at work, not a missing grant.
@Suite("Permission bypass matrix")
struct PermissionBypassTests {
    enum Attempt: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case unregisteredProcess
        case manifestNamesAnotherExecutable
        case pinnedExecutableReplaced
        case symlinkToAnotherProgram
        case anotherProgramMountedAtTheAppsPath
        case procSelfExeInManifest
        case execIntoUnregisteredOnSameConnection
        case caseVariantOfUndeclaredType
        case trailingDotVariantOfUndeclaredType
        case subtypeOfUndeclaredType
        case serviceTypeEnumerationWithoutEntitlement
        case declaringDNSSDTypeForEnumeration
        case publishingAnotherHostsAddress
        case resolveInstanceOfUndeclaredType
        case queryInstanceOfUndeclaredType
        case registerUndeclaredType
        case queryAnotherAppsServiceName
        case queryArbitraryName
        case reverseLookupByUnregisteredProcess
        case addressLookupByUnregisteredProcess
        case reconfirmByUnregisteredProcess
        case nonOperatorOnLoosenedControlSocket
        case appGrantsItself
        case nonOperatorReadsStore

        var testDescription: String { rawValue }
    }

    @Test("denied", arguments: Attempt.allCases)
    func denied(_ attempt: Attempt) throws {
        let lan = try TestLAN(hosts: 1)
        defer { lan.shutdown() }
        let area = try PermissionTestArea()
        defer { area.remove() }
        let host = lan.hosts[0]
        let daemon = try host.startPermissionDaemon(area: area)
        let app = try area.installApp(named: "tictactoe")
        try register(area.ticTacToeManifest(executable: app), grant: "org.example.tictactoe", on: daemon)

        func expectDenied(
            _ result: CommandResult, _ reason: String, status: Int32 = 77,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(result.status == status, "\(attempt): \(result)", sourceLocation: sourceLocation)
            #expect(
                (result.stderr + result.stdout).contains(reason), "\(attempt): expected '\(reason)' in \(result)",
                sourceLocation: sourceLocation)
        }
        func appBrowse(_ executable: String, _ type: String) throws -> CommandResult {
            try host.runApp(executable, ["browse", type, "--timeout", "3"], daemon: daemon)
        }

        switch attempt {
        case .unregisteredProcess:
            expectDenied(try appBrowse(try area.installApp(named: "stranger"), "_tictactoe._tcp"), "unregistered")

        case .manifestNamesAnotherExecutable:
            // Same file name, another directory: the kernel's path decides, not the name.
            let elsewhere = area.directory + "/elsewhere"
            try FileManager.default.createDirectory(
                atPath: elsewhere, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
            let copy = elsewhere + "/tictactoe"
            try FileManager.default.copyItem(atPath: app, toPath: copy)
            expectDenied(try appBrowse(copy, "_tictactoe._tcp"), "unregistered")

        case .pinnedExecutableReplaced:
            let digest = try host.check(["sha256sum", app]).stdout.split(separator: " ")[0]
            try register(
                area.ticTacToeManifest(executable: app, extra: ["executableSHA256": [app: String(digest)]]),
                grant: nil, on: daemon)
            let before = try appBrowse(app, "_tictactoe._tcp")
            #expect(before.status == 0, "the pinned binary itself is allowed: \(before)")
            // Another binary at the same path (a few bytes appended still runs).
            let replacement = app + ".new"
            try FileManager.default.copyItem(atPath: app, toPath: replacement)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: replacement))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("replaced".utf8))
            try handle.close()
            chmod(replacement, 0o755)
            #expect(rename(replacement, app) == 0)
            expectDenied(try appBrowse(app, "_tictactoe._tcp"), "unregistered")

        case .symlinkToAnotherProgram:
            // A link named like the app, pointing at another program: the kernel reports the program, not the link.
            let links = area.directory + "/links"
            try FileManager.default.createDirectory(
                atPath: links, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
            let stranger = try area.installApp(named: "stranger")
            try FileManager.default.createSymbolicLink(atPath: links + "/tictactoe", withDestinationPath: stranger)
            expectDenied(try appBrowse(links + "/tictactoe", "_tictactoe._tcp"), "unregistered")

        case .anotherProgramMountedAtTheAppsPath:
            // In a user and mount namespace of its own (no privilege needed), a process can mount any program at the
            // registered path, and /proc/PID/exe then shows that path. The daemon compares the files themselves.
            let stranger = try area.installApp(named: "stranger")
            let canUnshare = try host.run(try AppUser.command(["unshare", "-Urm", "true"]))
            try #require(
                canUnshare.status == 0, "unprivileged user namespaces are needed for this attempt: \(canUnshare)")
            let script =
                "mount --bind \(stranger) \(app) && exec \(app) browse _tictactoe._tcp --timeout 3 --socket \(daemon.socket)"
            expectDenied(
                try host.run(try AppUser.command(["unshare", "-Urm", "sh", "-c", script]), timeout: 20), "unregistered")
            #expect(daemon.logShows(app + " (another file at this path)"), "\(daemon.log)")
            // The app itself, run normally, is still recognised.
            #expect(try appBrowse(app, "_tictactoe._tcp").status == 0)

        case .procSelfExeInManifest:
            // A manifest that names /proc/self/exe would match every program: it is refused, and nothing stored.
            let manifest = try area.writeManifest(
                [
                    "id": "org.example.everything", "name": "Everything", "executables": ["/proc/self/exe"],
                    "NSBonjourServices": ["_tictactoe._tcp"], "NSLocalNetworkUsageDescription": "Everything.",
                ],
                named: "everything.json")
            expectDenied(try daemon.control(["app", "add", manifest]), "/proc", status: 65)
            let list = try daemon.control(["app", "list"])
            #expect(!list.stdout.contains("org.example.everything"), "\(list)")
            expectDenied(try appBrowse(try area.installApp(named: "stranger"), "_tictactoe._tcp"), "unregistered")

        case .execIntoUnregisteredOnSameConnection:
            let probe = area.directory + "/bin/probe"
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("CPrograms/exec_probe.c").path
            try host.check(["cc", "-O1", "-o", probe, source])
            let evil = area.directory + "/bin/evil"
            try FileManager.default.copyItem(atPath: probe, toPath: evil)
            try register(
                try area.writeManifest(
                    [
                        "id": "org.example.probe", "name": "Probe", "executables": [probe],
                        "NSBonjourServices": ["_tictactoe._tcp"], "NSLocalNetworkUsageDescription": "Probes.",
                    ],
                    named: "probe.json"), grant: "org.example.probe", on: daemon)
            let allowed = try host.run(try AppUser.command([probe, "browse", daemon.socket]))
            #expect(allowed.stdout.contains("status 0"), "the registered probe itself is allowed: \(allowed)")
            let switched = try host.run(try AppUser.command([probe, "connect-then-exec", daemon.socket, evil]))
            #expect(switched.stdout.contains("status -65555"), "\(switched)")
            #expect(daemon.logShows("refuse (unregistered)"), "\(daemon.log)")

        case .caseVariantOfUndeclaredType:
            expectDenied(try appBrowse(app, "_TicTacToe._udp"), "undeclared-type")

        case .trailingDotVariantOfUndeclaredType:
            expectDenied(try appBrowse(app, "_chess._tcp."), "undeclared-type")

        case .subtypeOfUndeclaredType:
            expectDenied(try appBrowse(app, "_printer._sub._http._tcp"), "undeclared-type")

        case .serviceTypeEnumerationWithoutEntitlement:
            expectDenied(
                try host.runApp(app, ["browse", "--all", "--timeout", "3"], daemon: daemon), "entitlement-required")

        case .declaringDNSSDTypeForEnumeration:
            // `_dns-sd._udp` holds the enumeration names, not a service: declaring it opens none of them.
            let sneaky = try area.installApp(named: "sneaky")
            try register(
                try area.writeManifest(
                    [
                        "id": "org.example.sneaky", "name": "Sneaky", "executables": [sneaky],
                        "NSBonjourServices": ["_dns-sd._udp"], "NSLocalNetworkUsageDescription": "Sees everything.",
                    ],
                    named: "sneaky.json"), grant: "org.example.sneaky", on: daemon)
            expectDenied(
                try host.runApp(
                    sneaky, ["query", "_services._dns-sd._udp.local.", "PTR", "--timeout", "3"],
                    daemon: daemon), "entitlement-required")
            expectDenied(
                try host.runApp(sneaky, ["resolve", "_services", "_dns-sd._udp", "--timeout", "3"], daemon: daemon),
                "entitlement-required")

        case .publishingAnotherHostsAddress:
            // DNSServiceRegisterRecord of `router.local. A` by the granted app: a host's address is an arbitrary name,
            // which needs the multicast entitlement (and opening address lookups to everyone opens only lookups).
            let python = try area.installPython(named: "recorder")
            try register(
                try area.writeManifest(
                    [
                        "id": "org.example.recorder", "name": "Recorder", "executables": [python],
                        "NSBonjourServices": ["_tictactoe._tcp"],
                        "NSLocalNetworkUsageDescription": "Publishes records.",
                    ],
                    named: "recorder.json"), grant: "org.example.recorder", on: daemon)
            let result = try host.run(
                try AppUser.command([
                    python, "-c", DNSSDByHand.python + Self.publishRouterAddress,
                    daemon.socket,
                ]), timeout: 20)
            #expect(result.stdout.contains("connection 0\nrecord -65555\n"), "\(result)\n\(daemon.log)")
            #expect(
                daemon.logShows("refuse (entitlement-required): publishing router.local. A"),
                "\(daemon.log)")

        case .resolveInstanceOfUndeclaredType:
            expectDenied(
                try host.runApp(app, ["resolve", "Office Printer", "_ipp._tcp", "--timeout", "3"], daemon: daemon),
                "undeclared-type")

        case .queryInstanceOfUndeclaredType:
            expectDenied(
                try host.runApp(
                    app, ["query", "Office Printer._ipp._tcp.local.", "TXT", "--timeout", "3"],
                    daemon: daemon), "undeclared-type")

        case .registerUndeclaredType:
            expectDenied(
                try host.runApp(app, ["register", "Web", "_http._tcp", "80", "--timeout", "3"], daemon: daemon),
                "undeclared-type")

        case .queryAnotherAppsServiceName:
            let chess = try area.installApp(named: "chess")
            try register(
                try area.writeManifest(
                    [
                        "id": "org.example.chess", "name": "Chess", "executables": [chess],
                        "NSBonjourServices": ["_chess._tcp"],
                        "NSLocalNetworkUsageDescription": "Chess finds opponents.",
                    ],
                    named: "chess.json"), grant: "org.example.chess", on: daemon)
            expectDenied(
                try host.runApp(
                    chess, ["query", "Home Game._tictactoe._tcp.local.", "SRV", "--timeout", "3"],
                    daemon: daemon), "undeclared-type")

        case .queryArbitraryName:
            expectDenied(
                try host.runApp(app, ["query", "printer.local.", "TXT", "--timeout", "3"], daemon: daemon),
                "entitlement-required")

        case .reverseLookupByUnregisteredProcess:
            let stranger = try area.installApp(named: "stranger")
            expectDenied(
                try host.runApp(
                    stranger, ["query", "1.0.214.10.in-addr.arpa.", "PTR", "--timeout", "3"],
                    daemon: daemon), "unregistered")

        case .addressLookupByUnregisteredProcess:
            let stranger = try area.installApp(named: "stranger")
            expectDenied(
                try host.runApp(stranger, ["lookup", "\(daemon.hostName).local", "--timeout", "3"], daemon: daemon),
                "unregistered")

        case .reconfirmByUnregisteredProcess:
            // Reconfirming makes the daemon ask the network about a name and may flush what it knows: a query.
            let python = try area.installPython(named: "unknown")
            let result = try host.run(
                try AppUser.command([
                    python, "-c", DNSSDByHand.python + RecordInteropTests.reconfirmAddress,
                    daemon.socket, "\(daemon.hostName).local.", "10.0.0.1",
                ]), timeout: 20)
            #expect(result.stdout.contains("status -65555"), "\(result)")
            #expect(
                daemon.logShows("refused reconfirm \"\(daemon.hostName).local.\" type 1")
                    && daemon.log.contains("unregistered"),
                "\(daemon.log)")

        case .nonOperatorOnLoosenedControlSocket:
            // Even with the socket's mode opened up, the daemon checks the peer's credentials on every request.
            #expect(chmod(daemon.controlSocket, 0o666) == 0)
            let result = try host.run(
                try AppUser.command(
                    [
                        try HeraldBinaries.herald(), "grant", "org.example.stranger", "--control-socket",
                        daemon.controlSocket,
                    ]))
            expectDenied(result, "only operators may do this")
            #expect(daemon.logShows("not an operator"), "\(daemon.log)")

        case .appGrantsItself:
            try daemon.control(["reset", "org.example.tictactoe"]).expectSuccess()
            let result = try host.run(
                try AppUser.command(
                    [app, "grant", "org.example.tictactoe", "--control-socket", daemon.controlSocket]))
            expectDenied(result, "only operators may do this")
            let show = try daemon.control(["app", "show", "org.example.tictactoe"])
            #expect(show.stdout.contains("decision:      not-determined"), "\(show)")

        case .nonOperatorReadsStore:
            // Even where the state directory is readable, the store file is not.
            #expect(chmod(daemon.stateDirectory, 0o755) == 0)
            let result = try host.run(try AppUser.command(["cat", daemon.storePath]))
            expectDenied(result, "Permission denied", status: 1)
        }
    }

    /// After `DNSSDByHand.python`: opens a shared connection and registers `router.local. A 10.213.99.99` on it
    /// (DNSServiceRegisterRecord, its status on a passed socket); prints both statuses.
    static let publishRouterAddress = #"""
        s = connect()
        request(s, 1, b"shared00", b"")
        print("connection", status_of(s), flush=True)
        record = struct.pack(">II", 0x20, 0) + b"router.local.\0" + struct.pack(">HHH", 1, 1, 4) + bytes([10, 213, 99, 99])
        body = b"\0" + record + struct.pack(">I", 120)
        mine, theirs = socket.socketpair()
        socket.send_fds(s, [struct.pack(">IIII8sI", 1, len(body), 0, 2, b"record00", 0) + body], [theirs.fileno()])
        theirs.close()
        mine.settimeout(15)
        print("record", status_of(mine), flush=True)
        """#

    /// Registers a manifest and, when `grant` names an app, grants it.
    private func register(_ manifest: String, grant: String?, on daemon: HeraldDaemon) throws {
        try daemon.control(["app", "add", manifest]).expectSuccess()
        if let grant { try daemon.control(["grant", grant]).expectSuccess() }
    }
}

extension CommandResult {
    /// Throws with the output unless the command exited 0.
    func expectSuccess() throws {
        guard status == 0 else { throw HarnessError.setup("command failed: \(self)") }
    }
}
