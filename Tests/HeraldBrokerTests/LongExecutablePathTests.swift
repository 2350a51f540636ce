import Foundation
import Testing

@testable import HeraldBroker

/// Paths may have up to 4095 bytes. An app installed deep in a tree must be recognised by its full path:
/// reading `/proc/PID/exe` used to stop after about 1 KiB, and the cut path matched no manifest.
@Suite("Executable paths longer than 1 KiB")
struct LongExecutablePathTests {
    @Test("the exe link of a process is read whole, and matches a manifest that names the long path")
    func longPathIsReadWhole() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        var deep = directory
        for index in 0..<40 { deep += "/level-\(index)-abcdefghijklmnopqrstuvwxyz" }
        let binary = deep + "/tictactoe"
        #expect(binary.utf8.count > 1400)
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try Data("#!/bin/true\n".utf8).write(to: URL(fileURLWithPath: binary))
        let process = directory + "/proc/4242"
        try FileManager.default.createDirectory(atPath: process, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: process + "/exe", withDestinationPath: binary)
        let inspector = ProcessInspector(procRoot: directory + "/proc")
        let executable = try inspector.executable(of: 4242)
        #expect(executable.path == binary)
        #expect(!executable.namesAnotherFile)
        #expect(try SymbolicLink.target(of: process + "/exe") == binary)
    }
}
