import Foundation
import Glibc
import Testing

@testable import HeraldDaemon

/// The lock on the state directory, on real files in a temporary directory.
@Suite("The state directory's lock")
struct StateDirectoryLockTests {
    let root: String

    init() throws {
        root = try makeTemporaryDirectory("herald-lock")
    }

    @Test(
        "a state directory whose parents are missing is made, mode 0700 (its parents as the umask says), and the lock is held"
    )
    func makesMissingParents() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/var/lib/herald"
        // The process's umask, read rather than set (setting it would touch every test running meanwhile).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(
            mode_t(umaskLine.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        let lock = try StateDirectoryLock(directory: directory)
        #expect(lock.unavailable == nil)
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        // Others may still reach what else lives under the parents.
        #expect(
            stat(root + "/var/lib", &info) == 0 && info.st_mode & 0o777 == 0o777 & ~mask,
            "umask \(String(mask, radix: 8))")
        let recorded = try String(contentsOfFile: directory + "/" + StateDirectoryLock.fileName, encoding: .utf8)
        #expect(recorded == "\(getpid())\n")
    }

    @Test("a second lock on the directory is refused, naming the holder's pid; once released it is taken")
    func secondLockRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        var first: StateDirectoryLock? = try StateDirectoryLock(directory: root)
        #expect(first?.unavailable == nil)
        #expect(throws: DaemonStartError.self) { try StateDirectoryLock(directory: root) }
        do {
            _ = try StateDirectoryLock(directory: root)
        } catch {
            #expect(
                error.description.contains("another heraldd (pid \(getpid())) is using the state directory \(root)"))
        }
        first = nil
        #expect(try StateDirectoryLock(directory: root).unavailable == nil)
    }

    @Test("a state directory that cannot be made, or is a file, stops the start with what is wrong")
    func unusablePaths() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = root + "/plain-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        for (directory, expected) in [
            (file, "the state directory \(file) is not a directory"),
            (file + "/below", "cannot create the state directory \(file)/below: "),
        ] {
            do {
                _ = try StateDirectoryLock(directory: directory)
                Issue.record("\(directory) was accepted")
            } catch {
                #expect(error.description.contains(expected), "\(error)")
            }
        }
    }
}
