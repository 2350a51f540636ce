import Foundation
import HeraldDaemon
import Testing

/// Reading `heraldd.conf` from the file system (`DaemonConfiguration+Loading.swift`); the text's rules are tested in
/// HeraldConfigTests.
@Suite("Loading the configuration file")
struct LoadingConfigurationTests {
    @Test("a configuration file that is missing, a directory, larger than 1 MiB or not UTF-8 is refused, saying which")
    func loadingFiles() throws {
        let directory = try makeTemporaryDirectory("herald-configuration")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func loadError(_ path: String, required: Bool = true) -> String? {
            var configuration = DaemonConfiguration()
            do {
                try configuration.load(from: path, required: required)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(loadError(directory + "/missing") == "no such file")
        #expect(loadError(directory + "/missing", required: false) == nil)
        #expect(loadError(directory) == "it is a directory, not a file")
        try Data(repeating: 0x23, count: (1 << 20) + 1).write(to: URL(fileURLWithPath: directory + "/large.conf"))
        #expect(loadError(directory + "/large.conf") == "it is larger than 1 MiB, which no configuration file is")
        try Data([0x5B, 0xFF, 0x5D]).write(to: URL(fileURLWithPath: directory + "/latin1.conf"))
        #expect(loadError(directory + "/latin1.conf") == "it is not UTF-8 text")
        // A device reads to its end: /dev/null is an empty configuration.
        #expect(loadError("/dev/null") == nil)
        try "[network]\nhost-name = kitchen\n".write(
            toFile: directory + "/good.conf", atomically: true, encoding: .utf8)
        var configuration = DaemonConfiguration()
        try configuration.load(from: directory + "/good.conf", required: true)
        #expect(configuration.hostName == "kitchen")
    }
}
