import Foundation
import Testing

/// heraldd's own options and configuration file, checked with `--check-config`, which stops before any socket or
/// network is touched.
@Suite("heraldd's command line")
struct DaemonCommandLineTests {
    @Test("a host name that cannot be one DNS label is refused with exit 64, naming the option and the rule")
    func badHostNames() throws {
        let heraldd = try HeraldBinaries.heraldd()
        for name in [String(repeating: "a", count: 64), "bad.name", "kitchen.local", ""] {
            let result = try Command.run([heraldd, "--hostname", name, "--config", "/dev/null", "--check-config"])
            #expect(result.status == 64, "\(result)")
            #expect(
                result.stderr.contains("--hostname '\(name)' must be a single label of at most 63 bytes"), "\(result)")
        }
        // 63 bytes (31 two-byte characters and one more) is the longest label there is.
        let longest = String(repeating: "é", count: 31) + "a"
        let fine = try Command.run([heraldd, "--hostname", longest, "--config", "/dev/null", "--check-config"])
        #expect(fine.status == 0, "\(fine)")
        #expect(fine.stdout.contains("\nhost-name = \(longest)\n"), "\(fine)")
    }

    @Test("--config reads any readable file, /dev/null too, and refuses a directory or an endless device with exit 78")
    func configurationFiles() throws {
        let heraldd = try HeraldBinaries.heraldd()
        let empty = try Command.run([heraldd, "--config", "/dev/null", "--check-config"])
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.stdout.contains("the configuration is valid"), "\(empty)")

        let directory = FileManager.default.temporaryDirectory.path
        let notAFile = try Command.run([heraldd, "--config", directory, "--check-config"])
        #expect(notAFile.status == 78, "\(notAFile)")
        #expect(notAFile.stderr.contains("heraldd: \(directory): it is a directory, not a file"), "\(notAFile)")

        let endless = try Command.run([heraldd, "--config", "/dev/zero", "--check-config"], timeout: 20)
        #expect(endless.status == 78 && !endless.timedOut, "\(endless)")
        #expect(endless.stderr.contains("larger than 1 MiB"), "\(endless)")
    }

    @Test(
        "without /proc (a chroot that has not mounted it) heraldd stops with exit 78 and says what to mount, instead of starting with none of its options",
        .enabled(if: Requirements.isRoot, "unmounting /proc in a mount namespace of its own needs root"))
    func withoutProc() throws {
        let heraldd = try HeraldBinaries.heraldd()
        // A network namespace of its own as well: were the check missing, the daemon would start and could reach no
        // one.
        let result = try Command.run(
            ["unshare", "--mount", "--net", "sh", "-c", "umount -l /proc && exec \"$0\" --check-config", heraldd],
            timeout: 10)
        #expect(result.status == 78 && !result.timedOut, "\(result)")
        #expect(result.stderr.contains("heraldd: /proc is not mounted here"), "\(result)")
        #expect(!result.stdout.contains("the configuration is valid"), "\(result)")
    }
}
