import Foundation
import HeraldFiles
import Testing

/// Files and directories through the C library, as the store, the daemon and the tool read them.
@Suite("Files through the C library")
struct HeraldFilesTests {
    /// A fresh directory, removed afterwards.
    struct Directory {
        let path: String

        init() throws {
            path = NSTemporaryDirectory() + "herald-files-tests-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("Path names are taken apart and joined as dirname(1) and the shell do")
    func pathNames() {
        #expect(PathName.directory(of: "/var/lib/herald/permissions.sqlite") == "/var/lib/herald")
        #expect(PathName.directory(of: "/permissions.sqlite") == "/")
        #expect(PathName.directory(of: "permissions.sqlite") == ".")
        #expect(PathName.directory(of: "state/permissions.sqlite") == "state")
        #expect(PathName.directory(of: "/var/lib/herald/") == "/var/lib")
        #expect(PathName.directory(of: "/") == "/")
        #expect(PathName.joined("/etc/herald", "a.conf") == "/etc/herald/a.conf")
        #expect(PathName.joined("/etc/herald/", "a.conf") == "/etc/herald/a.conf")
        #expect(PathName.joined("/", "a.conf") == "/a.conf")
        #expect(PathName.joined("", "a.conf") == "a.conf")
        #expect(PathName.lastComponent(of: "/etc/herald/a.conf") == "a.conf")
        #expect(PathName.lastComponent(of: "a.conf") == "a.conf")
    }

    @Test("A file is read whole, or up to a limit; an endless device ends at the limit")
    func reading() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try directory.write("big", bytes)
        #expect(try FileContents.read(directory.path + "/big").get() == bytes)
        #expect(try FileContents.read(directory.path + "/big", limit: 70_000).get() == Array(bytes.prefix(70_000)))
        #expect(try FileContents.read("/dev/zero", limit: 100_001).get().count == 100_001)
        #expect(try FileContents.read("/dev/null").get().isEmpty)
        var chunks = 0
        let failure = FileContents.forEachChunk(of: directory.path + "/big", size: 65_536) { chunk in
            chunks += 1
            #expect(chunk.count <= 65_536)
            return chunks < 2
        }
        #expect(failure == nil && chunks == 2)
    }

    @Test("A failure keeps the system's reason")
    func failures() throws {
        let directory = try Directory()
        defer { directory.remove() }
        let missing = directory.path + "/missing"
        #expect(throws: FileError(ENOENT)) { try FileContents.read(missing).get() }
        #expect(FileError(ENOENT).description == "No such file or directory")
        #expect(FileContents.forEachChunk(of: missing, size: 10) { _ in true } == FileError(ENOENT))
        #expect(throws: FileError(EISDIR)) { try FileContents.read(directory.path).get() }
        #expect(throws: FileError(ENOENT)) { try DirectoryEntries.names(in: missing).get() }
        #expect(throws: FileError(ENOTDIR)) { try DirectoryEntries.names(in: "/dev/null").get() }
        #expect(throws: FileError(ENOENT)) { try FileKind.of(missing).get() }
    }

    @Test("Text must be UTF-8")
    func text() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("good", Array("grüße\n".utf8))
        try directory.write("bad", [0x66, 0xFF, 0x66])
        #expect(FileContents.text(directory.path + "/good") == "grüße\n")
        #expect(FileContents.text(directory.path + "/bad") == nil)
        #expect(FileContents.text(directory.path + "/missing") == nil)
    }

    @Test("A directory lists its entries without . and .., and paths tell their kind")
    func directories() throws {
        let directory = try Directory()
        defer { directory.remove() }
        try directory.write("a.service", [])
        try directory.write(".hidden", [])
        try FileManager.default.createDirectory(atPath: directory.path + "/b.d", withIntermediateDirectories: false)
        #expect(try DirectoryEntries.names(in: directory.path).get().sorted() == [".hidden", "a.service", "b.d"])
        #expect(try DirectoryEntries.names(in: directory.path + "/b.d").get().isEmpty)
        #expect(try FileKind.of(directory.path + "/a.service").get() == .regularFile)
        #expect(try FileKind.of(directory.path + "/b.d").get() == .directory)
        #expect(try FileKind.of("/dev/null").get() == .other)
        #expect(FileKind.isDirectory(directory.path) && !FileKind.isDirectory(directory.path + "/a.service"))
        #expect(FileKind.exists(directory.path + "/a.service") && !FileKind.exists(directory.path + "/nothing"))
    }
}
