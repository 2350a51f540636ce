import Foundation
import Testing

extension HeraldOnTestLANs {
    /// `herald`'s command-line contract (docs/command-line.md): exit statuses, messages that name the problem and the
    /// fix, and the permission states of the dnssd protocol, seen by an unprivileged app against a real
    /// heraldd. Everything runs inside a one-host TestLAN.
    @Suite(
        "herald command-line contract",
        .serialized
    )
    struct HeraldCommandLineTests {
        init() throws {
            try Requirements.check()
            _ = try HeraldBinaries.herald()
        }

        @Test("usage errors exit 64 and a missing daemon exits 69 with how to start it")
        func usageAndMissingDaemon() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let host = lan.hosts[0]
            let herald = try HeraldBinaries.herald()

            for arguments in [
                ["browse"], ["browse", "http"], ["browse", "_http._tcp", "--all"], ["browse", "--all", "--resolve"],
                ["browse", "_http._tcp", "--timeout", "0"], ["resolve", "x", "_http._tcp", "--timeout", "-1"],
                ["browse", "_http._tcp", "--timeout", "1e19"], ["lookup", "x.local", "--timeout", "40000000"],
                // A repeated key or an empty one is published with a warning, as dns-sd -R and avahi-publish publish it.
                ["register", "Name", "_http._tcp", "70000"], ["register", "Name", "_http._tcp", "80", "v=\\q"],
                ["register", "Name", "_printer._sub._http._tcp", "80"], ["query", "x.local", "NOTATYPE"],
                ["query", "example.com", "A"], ["lookup", "example.com"], ["lookup", "x", "--ipv4", "--ipv6"],
            ] {
                let result = try host.run([herald] + arguments)
                #expect(result.status == 64, "herald \(arguments.joined(separator: " ")): \(result)")
                #expect(result.stderr.contains("Error: "), "\(result)")
            }

            // A name that starts with '-' is not taken for bundled options (-dash2 holds -h, which used to print the
            // help and exit 0 with nothing registered): it is refused with how to pass it; after '--' it is a name.
            for arguments in [["register", "-dash2", "_http._tcp", "84"], ["register", "-1", "_http._tcp", "84"]] {
                let result = try host.run([herald] + arguments)
                #expect(result.status == 64 && result.stdout.isEmpty, "\(result)")
                #expect(
                    result.stderr.contains("'\(arguments[1])' is not an option")
                        && result.stderr.contains("goes after '--'")
                        && result.stderr.contains("cannot be negative") == (arguments[1] == "-1"),
                    "\(result)")
            }
            let none = host.directory + "/none.sock"
            let dashed = try host.run([herald, "register", "--socket", none, "--", "-dash2", "_http._tcp", "84"])
            #expect(
                dashed.status == 69 && dashed.stderr.contains("register \"-dash2\" _http._tcp")
                    && dashed.stderr.contains(none),
                "\(dashed)")

            // A TXT record that no mDNS message can hold (40 entries of 250 bytes) is refused before any request.
            let hugeTXT = (0..<40).map { "k\($0 + 10)=" + String(repeating: "v", count: 246) }
            let huge = try host.run([herald, "register", "Big", "_http._tcp", "80"] + hugeTXT)
            #expect(huge.status == 64, "\(huge)")
            #expect(
                huge.stderr.contains("the TXT record would be 10040 bytes, more than one mDNS message holds"), "\(huge)"
            )

            let missing = host.directory + "/nobody-here.sock"
            for arguments in [
                ["browse", "_http._tcp"], ["resolve", "X", "_http._tcp"], ["lookup", "x.local"],
                ["query", "x.local", "A"], ["register", "X", "_http._tcp", "80"],
            ] {
                let result = try host.run([herald] + arguments + ["--socket", missing])
                #expect(result.status == 69, "herald \(arguments.joined(separator: " ")): \(result)")
                #expect(result.stderr.hasPrefix("herald: \(arguments[0]) "), "\(result)")
                #expect(result.stderr.contains("the daemon is not running"), "\(result)")
                #expect(result.stderr.contains(missing), "\(result)")
                #expect(result.stderr.contains("systemctl start heraldd"), "\(result)")
            }
            // A manifest path that is a directory, or nothing, is named as such before the daemon is asked.
            for (path, problem) in [
                (host.directory, "this is a directory"), (host.directory + "/none.json", "no such file"),
            ] {
                let result = try host.run([herald, "app", "add", path, "--control-socket", missing])
                #expect(
                    result.status == 65 && result.stderr.contains("herald: app add \(path): \(problem)"), "\(result)")
            }
            // One this user may not read is named as such, not as missing.
            let locked = host.directory + "/locked"
            try FileManager.default.createDirectory(
                atPath: locked, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            #expect(FileManager.default.createFile(atPath: locked + "/app.json", contents: Data("{}".utf8)))
            let unreadable = try host.run(
                try AppUser.command([
                    herald, "app", "add", locked + "/app.json",
                    "--control-socket", missing,
                ]))
            #expect(
                unreadable.status == 65 && unreadable.stderr.contains("cannot read the file: Permission denied"),
                "\(unreadable)")
            // DNSSD_UDS_PATH is honoured when --socket is absent.
            let viaEnvironment = try host.run(
                [herald, "browse", "_http._tcp"], environment: ["DNSSD_UDS_PATH": missing])
            #expect(viaEnvironment.status == 69 && viaEnvironment.stderr.contains(missing), "\(viaEnvironment)")
            // Operator commands name the control socket's option and variable, not the app socket's.
            for arguments in [["status"], ["grant", "org.example.app"], ["requests"]] {
                let result = try host.run([herald] + arguments + ["--control-socket", missing])
                #expect(result.status == 69, "herald \(arguments.joined(separator: " ")): \(result)")
                #expect(
                    result.stderr.contains(missing)
                        && result.stderr.contains("--control-socket PATH or HERALD_CONTROL_SOCKET"),
                    "\(result)")
                #expect(!result.stderr.contains("DNSSD_UDS_PATH"), "\(result)")
            }

            // Every subcommand's help is complete: it documents each option.
            for (command, options) in [
                ("browse", ["--resolve", "--all", "--json", "--timeout", "--no-wait", "--socket"]),
                ("resolve", ["--json", "--timeout", "--socket"]),
                ("lookup", ["--json", "--timeout", "--socket"]),
                ("query", ["--json", "--timeout", "--socket"]),
                ("register", ["--subtype", "--host", "--socket", "--no-rename", "--timeout"]),
            ] {
                let help = try host.check([herald, command, "--help"]).stdout
                for option in options { #expect(help.contains(option), "herald \(command) --help lacks \(option)") }
            }
        }

        @Test("a daemon that stops answering: each command gives up at its --timeout with exit 69 and says why")
        func unresponsiveDaemon() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            // Stopped, heraldd still holds its socket: connecting works, but no request is answered.
            daemon.process.send(SIGSTOP)
            defer { daemon.process.send(SIGCONT) }
            for arguments in [
                ["browse", "_http._tcp"], ["resolve", "X", "_http._tcp"], ["lookup", "x.local"],
                ["query", "x.local", "A"], ["register", "X", "_http._tcp", "80"],
            ] {
                let started = Date()
                let result = try daemon.herald(arguments + ["--timeout", "1"], timeout: 30)
                let waited = Date().timeIntervalSince(started)
                #expect(result.status == 69, "herald \(arguments.joined(separator: " ")): \(result)")
                #expect(
                    result.stderr.contains("the daemon did not answer the request within 1.0 s")
                        && result.stderr.contains("journalctl -u heraldd"), "\(result)")
                // Without --timeout the wait is ten seconds; with it, about one.
                #expect(waited < 6, "herald \(arguments[0]) waited \(waited) s for a daemon that did not answer")
            }
            daemon.process.send(SIGCONT)
            let answered = try daemon.herald(["browse", "_http._tcp", "--timeout", "1"])
            #expect(answered.status == 0, "once running again it answers: \(answered)")
        }

        @Test("a name another registration on this host holds is renamed, or refused with --no-rename")
        func sameNameOnOneHost() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            let peer = try lan.hosts[1].startHeraldd()
            let first = try daemon.spawnHerald(["register", "Same", "_hsame._tcp", "5001"])
            defer { first.terminate(grace: 1) }
            try first.waitForOutput(containing: "_hsame._tcp.  Same\n", in: .stdout, timeout: 10)
            let second = try daemon.spawnHerald(["register", "Same", "_hsame._tcp", "5002"])
            defer { second.terminate(grace: 1) }
            try second.waitForOutput(containing: "_hsame._tcp.  Same (2)  (renamed", in: .stdout, timeout: 10)
            let refused = try daemon.herald([
                "register", "same", "_hsame._tcp", "5003", "--no-rename", "--timeout", "5",
            ])
            #expect(refused.status == 1 && refused.stderr.contains("NameConflict"), "\(refused)")
            // A peer finds each name once, with its own port.
            for (name, port) in [("Same", 5001), ("Same (2)", 5002)] {
                let resolved = try peer.herald(["resolve", name, "_hsame._tcp", "--json"])
                #expect(
                    resolved.status == 0 && HeraldJSON.objects(resolved.stdout).first?["port"] as? Int == port,
                    "\(resolved)")
            }
        }

        @Test("the TXT line resolve shows pastes back into herald register from a shell and gives the same TXT record")
        func txtPastesBack() throws {
            let lan = try TestLAN(hosts: 2)
            defer { lan.shutdown() }
            let daemon = try lan.hosts[0].startHeraldd()
            let peer = try lan.hosts[1].startHeraldd()
            // Backslashes, control bytes, bytes that are not UTF-8, spaces, quotes and shell metacharacters.
            let entries = [
                "path=a\\\\b", "ctl=\\x01\\x1b", "bin=\\x00\\xff", "title=Front page", "q=it's \"so\"",
                "cmd=$(true);*", "flag", "utf8=café", "back\\\\slash=key",
            ]
            let original = try daemon.spawnHerald(["register", "Original", "_hpaste._tcp", "5101"] + entries)
            defer { original.terminate(grace: 1) }
            try original.waitForOutput(containing: "Original\n", in: .stdout, timeout: 10)

            /// The TXT line of `herald resolve`, the strings of its JSON form and the exact bytes (hex).
            func resolved(_ name: String) throws -> (txtLine: String, json: [String], hex: String) {
                let text = try peer.herald(["resolve", name, "_hpaste._tcp"])
                let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("  txt") }
                let json = HeraldJSON.objects(try peer.herald(["resolve", name, "_hpaste._tcp", "--json"]).stdout).first
                return (
                    line.map { String($0.dropFirst("  txt".count)).trimmingCharacters(in: .whitespaces) } ?? "",
                    json?["txt"] as? [String] ?? [], json?["txtHex"] as? String ?? ""
                )
            }
            let shown = try resolved("Original")
            print("txt as shown: \(shown.txtLine)")
            #expect(shown.json.count == entries.count && !shown.hex.isEmpty, "\(shown)")
            #expect(shown.json.contains("path=a\\b") && shown.hex.contains(TXTHex.of("ctl=\u{01}\u{1b}")), "\(shown)")

            // The shown line, pasted into a shell command as it is.
            let copy = try lan.hosts[0].spawn([
                "sh", "-c", "exec \"$0\" register Copy _hpaste._tcp 5102 \(shown.txtLine) --socket \"$1\"",
                try HeraldBinaries.herald(), daemon.socket,
            ])
            defer { copy.terminate(grace: 1) }
            try copy.waitForOutput(containing: "Copy\n", in: .stdout, timeout: 10)
            let copied = try resolved("Copy")
            #expect(copied.hex == shown.hex && copied.json == shown.json, "\(copied) against \(shown)")
            #expect(copied.txtLine == shown.txtLine)
        }

        /// Hex of one TXT string with its length byte, as `txtHex` writes it.
        enum TXTHex {
            static func of(_ text: String) -> String {
                let bytes = [UInt8(text.utf8.count)] + Array(text.utf8)
                return bytes.map { String(format: "%02x", $0) }.joined()
            }
        }

        @Test(
            "--mdnsresponder-socket serves the app protocol on that path too: one daemon, with its registrations and permission rules"
        )
        func mdnsResponderPath() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let host = lan.hosts[0]
            let compat = area.directory + "/mDNSResponder"
            let daemon = try host.startPermissionDaemon(area: area, arguments: ["--mdnsresponder-socket", compat])
            try daemon.process.waitForOutput(
                containing: "app socket \(area.appSocket) and \(compat),", in: .stderr, timeout: 5)

            // A registration made through one path is found through the other.
            let register = try host.spawn([
                try HeraldBinaries.herald(), "register", "Both", "_hboth._tcp", "5010", "--socket", compat,
            ])
            defer { register.terminate(grace: 1) }
            try register.waitForOutput(containing: "_hboth._tcp.  Both\n", in: .stdout, timeout: 10)
            let found = try daemon.herald(["browse", "_hboth._tcp", "--json", "--timeout", "2"])
            #expect(HeraldJSON.objects(found.stdout).contains { $0["name"] as? String == "Both" }, "\(found)")

            // An app the daemon does not know is refused there too.
            let stranger = try area.installApp(named: "stranger")
            let refused = try host.run(
                try AppUser.command([stranger, "browse", "_tictactoe._tcp", "--socket", compat]), timeout: 10)
            #expect(refused.status == 77 && refused.stderr.contains("NoAuth -65555, unregistered"), "\(refused)")

            // The daemon removes the file it bound when it stops.
            #expect(daemon.stop() == 0)
            #expect(!FileManager.default.fileExists(atPath: compat))

            // A path it cannot bind (under a plain file) is logged, and the app socket is served all the same.
            #expect(FileManager.default.createFile(atPath: area.directory + "/plain", contents: Data()))
            let unbindable = try host.startHeraldd(arguments: [
                "--mdnsresponder-socket", area.directory + "/plain/mDNSResponder",
            ])
            defer { unbindable.stop() }
            try unbindable.process.waitForOutput(
                containing:
                    "not serving the app protocol on mDNSResponder's path \(area.directory)/plain/mDNSResponder",
                in: .stderr, timeout: 5)
            let served = try unbindable.herald(["browse", "_hboth._tcp", "--timeout", "1"])
            #expect(served.status == 0, "\(served)")
        }

        @Test("a request refused outright exits 77 at once, naming the reason and the fix")
        func staticDenial() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let host = lan.hosts[0]
            let daemon = try host.startPermissionDaemon(area: area)
            let stranger = try area.installApp(named: "stranger")

            let started = Date()
            let browse = try host.runApp(stranger, ["browse", "_tictactoe._tcp"], daemon: daemon, timeout: 10)
            #expect(browse.status == 77, "\(browse)")
            #expect(Date().timeIntervalSince(started) < 3, "a static denial must not wait")
            #expect(
                browse.stderr.hasPrefix(
                    "herald: browse _tictactoe._tcp: not permitted (NoAuth -65555, unregistered): "),
                "\(browse)")
            #expect(browse.stderr.contains("herald app add FILE"), "the message says how to get permission: \(browse)")

            let register = try host.runApp(
                stranger, ["register", "Game", "_tictactoe._tcp", "4000"], daemon: daemon, timeout: 10)
            #expect(register.status == 77, "\(register)")
            #expect(register.stderr.contains("not permitted (NoAuth -65555, unregistered)"), "\(register)")
        }

        @Test("a parked request says it waits for permission, then exits 77 at --timeout, or at once with --no-wait")
        func parkedRequest() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let host = lan.hosts[0]
            let daemon = try host.startPermissionDaemon(area: area)
            let app = try area.registerTicTacToe(on: daemon)

            var started = Date()
            let waited = try host.runApp(
                app, ["browse", "_tictactoe._tcp", "--timeout", "1.5"], daemon: daemon, timeout: 10)
            let elapsed = Date().timeIntervalSince(started)
            #expect(waited.status == 77, "\(waited)")
            #expect(elapsed >= 1.4 && elapsed < 4, "waited \(elapsed) s for a 1.5 s timeout")
            #expect(waited.stderr.contains("waiting for permission: browse _tictactoe._tcp"), "\(waited)")
            #expect(
                waited.stderr.contains(
                    "herald: browse _tictactoe._tcp: not permitted (NoAuth -65555, not-determined): "
                        + "still waiting"), "\(waited)")
            #expect(
                waited.stderr.contains("herald grant org.example.tictactoe"), "the message names the fix: \(waited)")
            #expect(waited.stdout.isEmpty, "\(waited)")

            started = Date()
            let noWait = try host.runApp(app, ["browse", "_tictactoe._tcp", "--no-wait"], daemon: daemon, timeout: 10)
            #expect(noWait.status == 77, "\(noWait)")
            #expect(Date().timeIntervalSince(started) < 3, "--no-wait must not wait")
            #expect(
                noWait.stderr.contains("not permitted (NoAuth -65555, not-determined)")
                    && noWait.stderr.contains("--no-wait"),
                "\(noWait)")
            #expect(
                noWait.stderr.contains("herald grant org.example.tictactoe"), "the message names the app: \(noWait)")

            // Interrupted while still parked: not permitted either.
            let register = try host.spawnApp(app, ["register", "Game", "_tictactoe._tcp", "4000"], daemon: daemon)
            try register.waitForOutput(
                containing: "waiting for permission: register \"Game\" _tictactoe._tcp", in: .stderr, timeout: 5)
            register.send(SIGINT)
            #expect(register.waitForExit(timeout: 5) == 77, "\(register.output)")
        }

        @Test("a parked browse delivers results by itself once permission comes, and exits 0 at --timeout")
        func parkedThenGranted() throws {
            let lan = try TestLAN(hosts: 1)
            defer { lan.shutdown() }
            let area = try PermissionTestArea()
            defer { area.remove() }
            let host = lan.hosts[0]
            let daemon = try host.startPermissionDaemon(area: area)
            let app = try area.registerTicTacToe(on: daemon)
            let peer = try daemon.spawnHerald(["register", "Granted Peer", "_tictactoe._tcp", "5000"])
            defer { peer.terminate(grace: 1) }
            try peer.waitForOutput(containing: "Granted Peer", in: .stdout, timeout: 10)

            let browse = try host.spawnApp(app, ["browse", "_tictactoe._tcp", "--timeout", "3"], daemon: daemon)
            try browse.waitForOutput(
                containing: "waiting for permission: browse _tictactoe._tcp", in: .stderr, timeout: 5)
            try daemon.control(["grant", "org.example.tictactoe"]).expectSuccess()
            #expect(browse.waitForExit(timeout: 10) == 0, "\(browse.output)")
            #expect(browse.stderr.contains("waiting for permission: browse _tictactoe._tcp"), "\(browse.stderr)")
            let lines = browse.stdout.split(separator: "\n")
            #expect(lines.count == 1, "\(browse.stdout)")
            let fields = lines.first?.split(separator: " ", omittingEmptySubsequences: true).map(String.init) ?? []
            #expect(
                fields.count >= 6 && fields[1] == "+" && fields[3] == "local."
                    && fields[4] == "_tictactoe._tcp." && fields[5...].joined(separator: " ") == "Granted Peer",
                "\(browse.stdout)")

            let json = try host.runApp(app, ["browse", "_tictactoe._tcp", "--timeout", "2", "--json"], daemon: daemon)
            #expect(json.status == 0, "\(json)")
            let objects = HeraldJSON.objects(json.stdout)
            #expect(objects.count == 1, "\(json)")
            #expect(
                objects.first?["event"] as? String == "add" && objects.first?["name"] as? String == "Granted Peer",
                "\(json)")

            let register = try host.runApp(
                app, ["register", "Own Game", "_tictactoe._tcp", "4000", "--timeout", "2"],
                daemon: daemon, timeout: 10)
            #expect(register.status == 0, "\(register)")
            #expect(register.stdout.contains("+  local.  _tictactoe._tcp.  Own Game"), "\(register)")
            #expect(register.stdout.contains("-  local.  _tictactoe._tcp.  Own Game"), "\(register)")
        }
    }
}
