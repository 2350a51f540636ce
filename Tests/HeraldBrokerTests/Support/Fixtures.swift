import Foundation
import HeraldBroker
import HeraldWire
import Synchronization
import Testing

/// The example manifest of docs/permissions.md ("The app manifest"), as JSON.
let ticTacToeJSON = """
    {
      "id": "org.example.tictactoe",
      "name": "Tic Tac Toe",
      "executables": ["/usr/bin/tictactoe"],
      "systemdUnits": ["tictactoe.service"],
      "NSBonjourServices": ["_tictactoe._tcp"],
      "NSLocalNetworkUsageDescription": "Tic Tac Toe looks for players on your local network.",
      "entitlements": ["com.apple.developer.networking.multicast"]
    }
    """

/// The same manifest as an XML property list, as an iOS developer would copy it from an Info.plist.
let ticTacToePlist = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
        <key>id</key>
        <string>org.example.tictactoe</string>
        <key>name</key>
        <string>Tic Tac Toe</string>
        <key>executables</key>
        <array>
            <string>/usr/bin/tictactoe</string>
        </array>
        <key>systemdUnits</key>
        <array><string>tictactoe.service</string></array>
        <key>NSBonjourServices</key>
        <array>
            <string>_tictactoe._tcp</string>
        </array>
        <key>NSLocalNetworkUsageDescription</key>
        <string>Tic Tac Toe looks for players on your local network.</string>
        <key>entitlements</key>
        <array>
            <string>com.apple.developer.networking.multicast</string>
        </array>
    </dict>
    </plist>
    """

/// Parses JSON text into a validated manifest, failing the test on any problem.
func manifest(json text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Manifest {
    do {
        return try ManifestParser.parse(Array(text.utf8)).manifest
    } catch {
        Issue.record("manifest did not validate: \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// The problems a manifest text is rejected with (none when it validates).
func problems(_ text: String, format: ManifestFormat? = nil) -> [ManifestProblem] {
    do {
        _ = try ManifestParser.parse(Array(text.utf8), format: format)
        return []
    } catch {
        return error.problems
    }
}

/// The rule codes of the problems of a manifest text.
func rules(_ text: String) -> [ManifestProblem.Rule] {
    problems(text).map(\.rule)
}

/// A manifest object in JSON from the given key/value lines (values already in JSON), with `id` and `name`
/// and an executable selector unless the lines give them.
func manifestJSON(_ fields: [String: String]) -> String {
    var all = [
        "id": "\"org.example.tictactoe\"",
        "name": "\"Tic Tac Toe\"",
        "executables": "[\"/usr/bin/tictactoe\"]",
        "NSBonjourServices": "[\"_tictactoe._tcp\"]",
        "NSLocalNetworkUsageDescription": "\"Looks for players.\"",
    ]
    for (key, value) in fields { all[key] = value }
    let body = all.filter { $0.value != "<absent>" }.sorted { $0.key < $1.key }
        .map { "  \"\($0.key)\": \($0.value)" }.joined(separator: ",\n")
    return "{\n" + body + "\n}"
}

/// A fresh directory under the system's temporary directory, removed by the caller with `removeDirectory`.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "herald-broker-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let seconds = Mutex(1_800_000_000.0)

    var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }

    func advance(_ interval: TimeInterval) {
        seconds.withLock { $0 += interval }
    }

    var function: @Sendable () -> Date { { [self] in self.now } }
}
