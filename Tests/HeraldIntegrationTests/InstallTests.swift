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
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.insert("/" + path)
            }
        }
        return result
    }

    @Test("install puts binaries, units, config, examples and completions where Linux expects them, and uninstall removes them but the config")
    func installAndUninstall() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-install-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let script = Self.repository.appendingPathComponent("Scripts/install.sh").path
        let binaries = try HeraldBinaries.directory()

        let installed = try Command.run(["bash", script, "--destdir", root, "--bin-dir", binaries])
        #expect(installed.status == 0, "\(installed)")
        let expected: Set<String> = [
            "/usr/local/bin/heraldd", "/usr/local/bin/herald", "/usr/local/lib/herald/libdns_sd.so.1",
            "/etc/systemd/system/heraldd.service", "/etc/systemd/system/heraldd-dnssd.socket",
            "/etc/systemd/system/heraldd-control.socket", "/etc/sysusers.d/herald.conf", "/etc/tmpfiles.d/herald.conf",
            "/etc/herald/heraldd.conf",
            "/usr/local/share/herald/services.d/ssh.service", "/usr/local/share/herald/services.d/sftp-ssh.service",
            "/usr/local/share/herald/services.d/device-info.service", "/usr/local/share/herald/services.d/http.dnssd",
            "/usr/local/share/bash-completion/completions/herald", "/usr/local/share/zsh/site-functions/_herald",
            "/usr/local/share/fish/vendor_completions.d/herald.fish", "/usr/local/share/herald/installed-files",
        ]
        #expect(Self.files(under: root) == expected)
        #expect(FileManager.default.isExecutableFile(atPath: root + "/usr/local/bin/heraldd"))
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/heraldd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/heraldd"))
        let completion = try String(contentsOfFile: root + "/usr/local/share/bash-completion/completions/herald", encoding: .utf8)
        #expect(completion.contains("browse") && completion.contains("register"))
        // The installed daemon accepts the installed configuration.
        let check = try Command.run([root + "/usr/local/bin/heraldd", "--config", root + "/etc/herald/heraldd.conf", "--check-config"])
        #expect(check.status == 0, "\(check)")

        // An administrator's configuration survives a second install and the uninstall.
        try "[network]\nhost-name = mine\n".write(toFile: root + "/etc/herald/heraldd.conf", atomically: true, encoding: .utf8)
        #expect(try Command.run(["bash", script, "--destdir", root, "--bin-dir", binaries]).status == 0)
        let removed = try Command.run(["bash", script, "--uninstall", "--destdir", root])
        #expect(removed.status == 0, "\(removed)")
        #expect(Self.files(under: root) == ["/etc/herald/heraldd.conf"])
        #expect(try String(contentsOfFile: root + "/etc/herald/heraldd.conf", encoding: .utf8) == "[network]\nhost-name = mine\n")
    }
}
