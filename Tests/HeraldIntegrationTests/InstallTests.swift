import Foundation
import Testing

/// The install step, run into a temporary root with the binaries this test run built.
@Suite("Installing Herald")
struct InstallTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func files(under root: String) -> Set<String> {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result = Set<String>()
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                result.insert("/" + path)
            }
        }
        return result
    }

    @Test(
        "install puts binaries, units, config, examples, man pages and completions where Linux expects them, and uninstall removes them but the config"
    )
    func installAndUninstall() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-install-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let script = Self.repository.appendingPathComponent("Scripts/install.sh").path
        let binaries = try HeraldBinaries.directory()

        let installed = try Command.run(["bash", script, "--destdir", root, "--bin-dir", binaries])
        #expect(installed.status == 0, "\(installed)")
        let expected: Set<String> = [
            "/usr/local/bin/heraldd", "/usr/local/bin/herald", "/usr/local/lib/herald/libdns_sd.so.1",
            "/usr/local/lib/herald/avahi-takeover",
            "/etc/systemd/system/heraldd.service", "/etc/systemd/system/heraldd-dnssd.socket",
            "/etc/systemd/system/heraldd-control.socket", "/etc/sysusers.d/herald.conf", "/etc/tmpfiles.d/herald.conf",
            "/etc/herald/heraldd.conf", "/etc/dbus-1/system.d/herald-avahi.conf",
            "/usr/local/share/dbus-1/system-services/org.freedesktop.Avahi.service",
            "/usr/local/share/herald/services.d/ssh.service", "/usr/local/share/herald/services.d/sftp-ssh.service",
            "/usr/local/share/herald/services.d/device-info.service", "/usr/local/share/herald/services.d/http.dnssd",
            "/usr/local/share/bash-completion/completions/herald", "/usr/local/share/zsh/site-functions/_herald",
            "/usr/local/share/fish/vendor_completions.d/herald.fish", "/usr/local/share/herald/installed-files",
            "/usr/local/share/bash-completion/completions/heraldd", "/usr/local/share/zsh/site-functions/_heraldd",
            "/usr/local/share/fish/vendor_completions.d/heraldd.fish",
            "/usr/local/share/man/man1/herald.1", "/usr/local/share/man/man8/heraldd.8",
            "/usr/local/share/man/man5/heraldd.conf.5", "/usr/local/share/doc/herald/README.md",
            "/usr/local/share/doc/herald/heraldd-enforcement.conf",
        ]
        #expect(Self.files(under: root) == expected)
        #expect(FileManager.default.isExecutableFile(atPath: root + "/usr/local/bin/heraldd"))
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/heraldd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/heraldd"))
        // Every unit's documentation is a file the install put there (what `systemctl help` opens).
        for name in ["heraldd.service", "heraldd-dnssd.socket", "heraldd-control.socket"] {
            let text = try String(contentsOfFile: root + "/etc/systemd/system/" + name, encoding: .utf8)
            let documents = text.split(separator: "\n").filter { $0.hasPrefix("Documentation=") }
                .flatMap { $0.dropFirst("Documentation=".count).split(separator: " ") }
            #expect(!documents.isEmpty, "\(name) names no documentation")
            for document in documents {
                #expect(
                    document.hasPrefix("file:///")
                        && FileManager.default.fileExists(atPath: root + document.dropFirst("file://".count)),
                    "\(name): \(document) is not installed")
            }
        }
        let completion = try String(
            contentsOfFile: root + "/usr/local/share/bash-completion/completions/herald", encoding: .utf8)
        #expect(completion.contains("browse") && completion.contains("register"))
        let daemonCompletion = try String(
            contentsOfFile: root + "/usr/local/share/bash-completion/completions/heraldd", encoding: .utf8)
        #expect(daemonCompletion.contains("--nss-socket") && daemonCompletion.contains("--check-config"))
        try Self.checkManualPages(under: root + "/usr/local/share/man", binaries: binaries)
        // The installed daemon accepts the installed configuration.
        let check = try Command.run([
            root + "/usr/local/bin/heraldd", "--config", root + "/etc/herald/heraldd.conf", "--check-config",
        ])
        #expect(check.status == 0, "\(check)")

        // An administrator's configuration survives a second install and the uninstall.
        try "[network]\nhost-name = mine\n".write(
            toFile: root + "/etc/herald/heraldd.conf", atomically: true, encoding: .utf8)
        #expect(try Command.run(["bash", script, "--destdir", root, "--bin-dir", binaries]).status == 0)
        let removed = try Command.run(["bash", script, "--uninstall", "--destdir", root])
        #expect(removed.status == 0, "\(removed)")
        #expect(Self.files(under: root) == ["/etc/herald/heraldd.conf"])
        #expect(
            try String(contentsOfFile: root + "/etc/herald/heraldd.conf", encoding: .utf8)
                == "[network]\nhost-name = mine\n")
    }

    @Test(
        "--replace-avahi masks avahi-daemon and has heraldd serve its NSS socket and service files; uninstall gives all of it back"
    )
    func replaceAvahiAndGiveBack() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-takeover-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let script = Self.repository.appendingPathComponent("Scripts/install.sh").path
        let binaries = try HeraldBinaries.directory()
        // Avahi's unit is enabled: its alias is what D-Bus activation of org.freedesktop.Avahi starts.
        let activationAlias = root + "/etc/systemd/system/dbus-org.freedesktop.Avahi.service"
        try FileManager.default.createDirectory(
            atPath: root + "/etc/systemd/system", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: activationAlias, withDestinationPath: "/lib/systemd/system/avahi-daemon.service")
        let installed = try Command.run(["bash", script, "--destdir", root, "--bin-dir", binaries, "--replace-avahi"])
        #expect(installed.status == 0, "\(installed)")
        #expect((installed.stdout + installed.stderr).contains("heraldd now holds Avahi's place"), "\(installed)")
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: activationAlias))
                == "/etc/systemd/system/heraldd.service", "D-Bus activation does not start heraldd")
        try Self.expectActivatable(
            serviceDirectory: root + "/usr/local/share/dbus-1/system-services", policyRoot: root)
        for unit in ["avahi-daemon.service", "avahi-daemon.socket"] {
            let link = root + "/etc/systemd/system/" + unit
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == "/dev/null", "\(unit) not masked")
        }
        let dropIn = try String(
            contentsOfFile: root + "/etc/systemd/system/heraldd.service.d/avahi-takeover.conf", encoding: .utf8)
        let execStart = try #require(
            dropIn.split(separator: "\n").last { $0.hasPrefix("ExecStart=/") }, "no ExecStart in \(dropIn)")
        #expect(
            execStart
                == "ExecStart=/usr/local/bin/heraldd --nss-socket /run/avahi-daemon/socket --services-dir /etc/herald/services.d --services-dir /etc/avahi/services"
        )
        #expect(dropIn.contains("\nRuntimeDirectory=avahi-daemon\n"), "\(dropIn)")
        // The installed daemon takes that command line.
        var arguments = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        arguments[0] = root + arguments[0]
        let check = try Command.run(arguments + ["--config", root + "/etc/herald/heraldd.conf", "--check-config"])
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.contains("nss-socket = /run/avahi-daemon/socket"), "\(check)")
        #expect(check.stdout.contains("services-dir = /etc/herald/services.d, /etc/avahi/services"), "\(check)")
        // Taking twice changes nothing.
        let takeover = root + "/usr/local/lib/herald/avahi-takeover"
        let again = try Command.run(["env", "ROOT=" + root, takeover, "take"])
        #expect(again.status == 0 && (again.stdout + again.stderr).contains("already holds"), "\(again)")

        let removed = try Command.run(["bash", script, "--uninstall", "--destdir", root])
        #expect(removed.status == 0, "\(removed)")
        #expect((removed.stdout + removed.stderr).contains("Avahi's place is given back"), "\(removed)")
        // Avahi's alias (checked below) is there again, as before the install; the rest is gone.
        #expect(
            Self.files(under: root).subtracting(["/etc/systemd/system/dbus-org.freedesktop.Avahi.service"]) == [
                "/etc/herald/heraldd.conf"
            ])
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/systemd/system/heraldd.service.d"))
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: activationAlias))
                == "/lib/systemd/system/avahi-daemon.service", "Avahi's activation alias is not given back")
    }

    /// A bus daemon reading `serviceDirectory` (as the system bus reads its standard directories) offers
    /// `org.freedesktop.Avahi` for activation: the installed activation file is one the bus accepts. The bus is a
    /// private one on a socket in `policyRoot`; nothing is activated.
    static func expectActivatable(serviceDirectory: String, policyRoot: String) throws {
        let dbusDaemon = try Requirements.requireExecutable("dbus-daemon")
        let dbusSend = try Requirements.requireExecutable("dbus-send")
        let socket = policyRoot + "/activation-check.socket"
        let config = policyRoot + "/activation-check.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <servicedir>\(serviceDirectory)</servicedir>
          <policy context="default">
            <allow user="*"/>
            <allow send_destination="org.freedesktop.DBus"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow receive_type="method_return"/>
          </policy>
        </busconfig>

        """.write(toFile: config, atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(atPath: config)
            try? FileManager.default.removeItem(atPath: socket)
        }
        let arguments = ["--nofork", "--nopidfile", "--config-file=" + config]
        let bus = try RunningProcess(executable: dbusDaemon, arguments: arguments, command: [dbusDaemon] + arguments)
        defer { bus.terminate() }
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: socket) }.held, "no bus socket")
        let names = try Command.run([
            dbusSend, "--bus=unix:path=" + socket, "--print-reply", "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus", "org.freedesktop.DBus.ListActivatableNames",
        ])
        #expect(names.status == 0, "\(names)")
        #expect(names.stdout.contains("\"org.freedesktop.Avahi\""), "\(names)")
    }

    /// The installed pages are valid roff that man renders without warnings, and they describe what the built
    /// binaries offer: every subcommand and option of herald and heraldd (as their own help dump lists them)
    /// and every setting of the shipped configuration file. A page that misses one is out of date: run
    /// Scripts/generate-man-pages.sh (heraldd.conf.5 is edited by hand).
    static func checkManualPages(under directory: String, binaries: String) throws {
        let pages = ["herald": directory + "/man1/herald.1", "heraldd": directory + "/man8/heraldd.8"]
        for (tool, page) in pages.sorted(by: { $0.key < $1.key }) {
            let text = try String(contentsOfFile: page, encoding: .utf8)
            #expect(
                text.contains(".Dt \(tool.uppercased()) \(tool == "herald" ? 1 : 8)"),
                "\(page) has the wrong title or section")
            let dump = try Command.run([binaries + "/" + tool, "--experimental-dump-help"])
            #expect(dump.status == 0, "\(dump)")
            let names = Self.optionsAndSubcommands(inHelpDump: dump.stdout)
            #expect(!names.isEmpty)
            for name in names where !text.contains(name) {
                Issue.record("\(page) does not mention \(name) of \(tool); run Scripts/generate-man-pages.sh")
            }
            try Self.expectCleanRendering(page)
        }
        let configurationPage = directory + "/man5/heraldd.conf.5"
        let configurationText = try String(contentsOfFile: configurationPage, encoding: .utf8)
        let shipped = try String(contentsOf: repository.appendingPathComponent("docs/heraldd.conf"), encoding: .utf8)
        let keys = shipped.split(separator: "\n").compactMap { line -> String? in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return line[..<equals].trimmingCharacters(in: .whitespaces)
        }
        #expect(keys.count > 10)
        for key in keys
        where !configurationText.contains(".B \(key)") && !configurationText.contains(".BR \(key) ")
            && !configurationText.contains(", \" \(key)")
        {
            Issue.record("heraldd.conf.5 does not describe the setting \(key) of docs/heraldd.conf")
        }
        try Self.expectCleanRendering(configurationPage)
    }

    /// Long option names (`--json`) and subcommand names in `--experimental-dump-help` output.
    static func optionsAndSubcommands(inHelpDump json: String) -> Set<String> {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
            let command = root["command"] as? [String: Any]
        else { return [] }
        var names = Set<String>()
        func visit(_ command: [String: Any], isRoot: Bool) {
            if !isRoot, let name = command["commandName"] as? String, name != "help" { names.insert(name) }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["shouldDisplay"] as? Bool ?? true else { continue }
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    if let text = name["name"] as? String, text != "help" { names.insert("-" + text) }
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { visit(sub, isRoot: false) }
        }
        visit(command, isRoot: true)
        return names
    }

    /// `man -l` renders the page with no warning (when man is installed).
    static func expectCleanRendering(_ page: String) throws {
        guard let man = Requirements.executable("man") else { return }
        let rendered = try Command.run(["env", "MANWIDTH=80", "MAN_KEEP_FORMATTING=0", man, "--warnings", "-l", page])
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(page): \(rendered)")
        #expect(rendered.stdout.count > 500, "\(page) renders to almost nothing")
    }
}
