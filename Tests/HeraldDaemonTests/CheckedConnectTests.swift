import Foundation
import Testing

@testable import HeraldDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon connects to a client's named error socket on the client's behalf: only to a socket of that user,
/// never through a symbolic link, and never blocking.
@Suite("Connecting to a client's named socket")
struct CheckedConnectTests {
    func refusal(_ path: String, owner: UInt32?) -> Int32? {
        do {
            close(try UnixSocket.connectChecked(to: path, owner: owner))
            return nil
        } catch {
            return error.code
        }
    }

    @Test(
        "a socket of the given owner is reached; another user's, a link to it, a plain file or a missing path are not")
    func ownership() throws {
        let directory = try makeTemporaryDirectory("herald-checked-connect")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/errors.sock"
        let listener = try UnixSocket.listen(at: path)
        defer { close(listener) }
        let owner = getuid()
        #expect(refusal(path, owner: nil) == nil)
        #expect(refusal(path, owner: owner) == nil)
        #expect(refusal(path, owner: owner + 1000) == EACCES)
        let link = directory + "/link.sock"
        #expect(symlink(path, link) == 0)
        #expect(refusal(link, owner: nil) == ENOTSOCK, "a symbolic link is not followed")
        let file = directory + "/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(refusal(file, owner: nil) == ENOTSOCK)
        #expect(refusal(directory + "/missing.sock", owner: nil) == ENOENT)
    }

    @Test("a listener whose backlog is full fails the connect at once instead of holding the caller")
    func fullBacklog() throws {
        let directory = try makeTemporaryDirectory("herald-checked-connect")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/busy.sock"
        let listener = try UnixSocket.listen(at: path, backlog: 0)
        defer { close(listener) }
        // The one connection a backlog of 0 holds, never accepted.
        let filler = try UnixSocket.connect(to: path, nonBlocking: true)
        defer { close(filler) }
        #expect(refusal(path, owner: nil) == EAGAIN)
    }
}
