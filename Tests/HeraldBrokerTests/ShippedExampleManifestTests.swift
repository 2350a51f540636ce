import Foundation
import HeraldBroker
import Testing

@Suite("The manifest shipped with the Tic Tac Toe example")
struct ShippedExampleManifestTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/TicTacToe/tictactoe.json").path

    @Test("validates without warnings and declares what the example uses")
    func validates() throws {
        let validated = try ManifestParser.parse(contentsOf: Self.path)
        #expect(validated.warnings.isEmpty, "\(validated.warnings)")
        let manifest = validated.manifest
        #expect(manifest.id.rawValue == "org.example.tictactoe")
        #expect(manifest.name == "Tic Tac Toe")
        #expect(manifest.bonjourServices.map(\.description) == ["_tictactoe._tcp"])
        #expect(manifest.usageDescription == "Tic Tac Toe looks for players on your local network.")
        #expect(manifest.executables.contains("/usr/local/bin/tictactoe"))
        #expect(!manifest.hasMulticastEntitlement)
    }
}
