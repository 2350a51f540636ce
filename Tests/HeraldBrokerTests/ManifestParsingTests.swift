import Foundation
import HeraldBroker
import HeraldWire
import Testing

@Suite("Reading manifest files")
struct ManifestParsingTests {
    @Test("The documented example manifest (docs/permissions.md) reads to the values it states")
    func documentedExample() throws {
        let result = try ManifestParser.parse(Array(ticTacToeJSON.utf8))
        let app = result.manifest
        #expect(result.warnings.isEmpty)
        #expect(app.id == (try AppID("org.example.tictactoe")))
        #expect(app.name == "Tic Tac Toe")
        #expect(app.executables == ["/usr/bin/tictactoe"])
        #expect(app.systemdUnits == ["tictactoe.service"])
        #expect(app.bonjourServices == [try ServiceType("_tictactoe._tcp")])
        #expect(app.usageDescription == "Tic Tac Toe looks for players on your local network.")
        #expect(app.hasMulticastEntitlement)
    }

    @Test("An XML property list with the same keys gives the same manifest as the JSON file")
    func plistEqualsJSON() throws {
        #expect(ManifestParser.detectFormat(Array(ticTacToePlist.utf8)) == .propertyList)
        #expect(ManifestParser.detectFormat(Array(ticTacToeJSON.utf8)) == .json)
        let fromPlist = try ManifestParser.parse(Array(ticTacToePlist.utf8))
        let fromJSON = try ManifestParser.parse(Array(ticTacToeJSON.utf8))
        #expect(fromPlist == fromJSON)
    }

    @Test("The same broken manifest in JSON and as a property list is rejected with the same problems")
    func brokenPlistEqualsBrokenJSON() {
        let json = """
            {"id": "tictactoe", "name": 3, "executables": ["bin/tictactoe"],
             "NSBonjourServices": ["_tic+tac._tcp", "_game._udp", "_GAME._udp."], "colour": "red"}
            """
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>id</key><string>tictactoe</string>
              <key>name</key><integer>3</integer>
              <key>executables</key><array><string>bin/tictactoe</string></array>
              <key>NSBonjourServices</key>
              <array><string>_tic+tac._tcp</string><string>_game._udp</string><string>_GAME._udp.</string></array>
              <key>colour</key><string>red</string>
            </dict></plist>
            """
        let fromJSON = problems(json)
        #expect(fromJSON.count == 6)
        // Property-list keys carry lines and JSON keys too, so compare everything but the wording of lines.
        #expect(problems(plist).map(\.rule) == fromJSON.map(\.rule))
        #expect(problems(plist).map(\.field) == fromJSON.map(\.field))
        #expect(problems(plist).map(\.value) == fromJSON.map(\.value))
    }

    @Test("The canonical JSON the store keeps reads back to an equal manifest")
    func canonicalRoundTrip() throws {
        let pinned = try Manifest(
            id: "org.example.Chess", name: "Chess \"Pro\" édition",
            executables: ["/opt/chess/bin/chess", "/usr/bin/chess"],
            systemdUnits: ["chess@.service", "app-chess.scope"],
            executableSHA256: ["/usr/bin/chess": String(repeating: "AB", count: 32)],
            bonjourServices: ["_Chess._tcp", "_chess-clock._udp"], usageDescription: "Finds boards.\nAnd clocks.")
        for app in [pinned, try manifest(json: ticTacToeJSON)] {
            let text = app.jsonText
            #expect(try ManifestParser.parse(Array(text.utf8)).manifest == app)
            #expect(try ManifestParser.parse(Array(text.utf8)).manifest.jsonText == text)
        }
        #expect(pinned.executableSHA256["/usr/bin/chess"]?.hex == String(repeating: "ab", count: 32))
    }

    @Test("A manifest without a usage description is accepted with a warning")
    func missingUsageDescriptionWarns() throws {
        let result = try ManifestParser.parse(Array(manifestJSON(["NSLocalNetworkUsageDescription": "<absent>"]).utf8))
        #expect(result.manifest.usageDescription == nil)
        #expect(result.warnings.map(\.rule) == [.missingUsageDescription])
        #expect(result.warnings[0].severity == .warning)
        #expect(result.warnings[0].description.contains("every request it makes will be refused"))
    }

    @Test("A manifest that declares no types and has no entitlement is accepted with a warning")
    func noTypesWarns() throws {
        let result = try ManifestParser.parse(Array(manifestJSON(["NSBonjourServices": "<absent>"]).utf8))
        #expect(result.manifest.bonjourServices.isEmpty)
        #expect(result.warnings.map(\.rule) == [.noServiceTypes])
    }

    @Test("A JSON syntax error names its line and column and what is wrong")
    func jsonSyntaxError() {
        let found = problems("{\n  \"id\": \"org.example.x\",\n  \"name\": \"X\",\n}")
        #expect(found.map(\.rule) == [.syntax])
        #expect(found[0].message == "line 4, column 1: JSON: a comma is followed by '}': remove the trailing comma")
    }

    @Test(
        "The JSON reader is strict",
        arguments: [
            ("{\"a\": 01}", "leading zeros"),
            ("{\"a\": 'x'}", "unexpected character"),
            ("{\"a\": \"\\x\"}", "not a JSON escape"),
            ("{\"a\": \"\\ud800\"}", "surrogate"),
            ("{\"a\": tru}", "unexpected word"),
            ("{\"a\": 1} {}", "after the end"),
            ("{\"a\": \"tab\there\"}", "control character"),
            ("{\"a\" 1}", "expected ':'"),
            ("{\"a\": [1 2]}", "expected ',' or ']'"),
            ("{\"a\": \"open", "closing '\"' is missing"),
        ])
    func jsonStrictness(text: String, expected: String) {
        let found = problems(text)
        #expect(found.map(\.rule) == [.syntax])
        #expect(found.first?.message.contains(expected) == true, "\(found)")
    }

    @Test("Deep nesting is refused rather than recursed into")
    func deepNesting() {
        let text = "{\"a\": " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(problems(text).first?.message.contains("nested more than") == true)
    }

    @Test("JSON escapes and non-ASCII text read correctly")
    func jsonEscapes() throws {
        let document = try ManifestParser.document(Array(#"{"a": "caf\u00e9 \ud83c\udfb2 \"q\" \\ \/ ü"}"#.utf8))
        #expect(document == .object([.init(key: "a", value: .string("café 🎲 \"q\" \\ / ü"), line: 1)]))
    }

    @Test("Duplicate keys are kept by the readers so that the validator can report them")
    func duplicateKeysKept() throws {
        let json = try ManifestParser.document(Array("{\"id\": \"a.b\", \"id\": \"c.d\"}".utf8))
        guard case .object(let entries) = json else {
            Issue.record("not an object")
            return
        }
        #expect(entries.map(\.key) == ["id", "id"])
        let plist = try ManifestParser.document(
            Array("<plist><dict><key>id</key><string>a.b</string><key>id</key><string>c.d</string></dict></plist>".utf8)
        )
        guard case .object(let plistEntries) = plist else {
            Issue.record("not an object")
            return
        }
        #expect(plistEntries.map(\.key) == ["id", "id"])
    }

    @Test("Booleans stay booleans and numbers stay numbers in both formats")
    func typesAreKept() throws {
        let json = try ManifestParser.document(Array("{\"a\": true, \"b\": 1, \"c\": 1.5}".utf8))
        #expect(
            json
                == .object([
                    .init(key: "a", value: .bool(true), line: 1), .init(key: "b", value: .number("1"), line: 1),
                    .init(key: "c", value: .number("1.5"), line: 1),
                ]))
        let plist = try ManifestParser.document(
            Array(
                """
                <plist><dict><key>a</key><true/><key>b</key><integer>1</integer><key>c</key><real>1.5</real>
                <key>d</key><date>2020-01-01T00:00:00Z</date></dict></plist>
                """.utf8))
        guard case .object(let entries) = plist else {
            Issue.record("not an object")
            return
        }
        #expect(entries.map(\.value) == [.bool(true), .number("1"), .number("1.5"), .other("date")])
    }

    @Test(
        "The property-list reader refuses what is not a property list",
        arguments: [
            ("<plist><dict><key>a</key></dict></plist>", "has no value"),
            ("<plist><dict><string>x</string></dict></plist>", "expected <key>"),
            ("<plist><dict/><dict/></plist>", "exactly one value"),
            ("<plist><set/></plist>", "not a property-list element"),
            ("<html></html>", "single <plist>"),
            ("<plist><array>loose text</array></plist>", "outside any value"),
            ("<plist><integer>twelve</integer></plist>", "not a whole number"),
            ("<plist><dict><key>a</key><string>unclosed</dict></plist>", "not well formed"),
            ("<plist></plist>", "holds no value"),
        ])
    func plistStrictness(text: String, expected: String) {
        let found = problems(text)
        #expect(found.map(\.rule) == [.syntax])
        #expect(found.first?.message.contains(expected) == true, "\(found)")
    }

    @Test(
        "A property list that declares entities or a DTD subset is a syntax error: nothing is expanded or loaded",
        arguments: [
            "<!DOCTYPE plist [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><plist><string>&x;</string></plist>",
            "<!DOCTYPE plist [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]><plist><string>&b;</string></plist>",
            "<!DOCTYPE plist SYSTEM \"file:///etc/passwd\"><plist><string>&x;</string></plist>",
        ])
    func plistEntitiesRefused(text: String) {
        let found = problems(text, format: .propertyList)
        #expect(found.map(\.rule) == [.syntax])
        #expect(found.first?.message.contains("property list: ") == true, "\(found)")
        #expect(found.first?.message.contains("root:") == false)
    }

    @Test("A property list's entries carry the line of their <key>, and errors the line of the element at fault")
    func plistLines() throws {
        let document = try ManifestParser.document(
            Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                    <key>id</key>
                    <string>a.b</string>

                    <key>name</key><string>A &amp; B</string>
                </dict>
                </plist>
                """.utf8), format: .propertyList)
        #expect(
            document
                == .object([
                    .init(key: "id", value: .string("a.b"), line: 5),
                    .init(key: "name", value: .string("A & B"), line: 8),
                ]))
        let found = problems("<plist>\n<dict>\n<key>a</key>\n<string>x</string>\n<integer>1</integer></dict></plist>")
        #expect(
            found.first?.message.hasPrefix("line 5: property list: inside <dict>, expected <key> but found <integer>")
                == true,
            "\(found)")
    }

    @Test("A property list whose top level is not a dictionary is not a manifest")
    func plistArrayTopLevel() {
        let found = problems("<plist><array><string>_x._tcp</string></array></plist>")
        #expect(found.map(\.rule) == [.notAnObject])
    }

    @Test("A file that is neither JSON nor XML, or is too large, is refused before parsing")
    func formatAndSize() {
        #expect(rules("id = org.example.x") == [.syntax])
        #expect(rules("") == [.syntax])
        let huge = "{\"name\": \"" + String(repeating: "x", count: ManifestParser.maxFileSize) + "\"}"
        #expect(rules(huge) == [.tooLarge])
    }

    @Test("A manifest file on disk is read, and a missing one is reported as unreadable")
    func readingFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let path = directory + "/tictactoe.plist"
        try ticTacToePlist.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ManifestParser.parse(contentsOf: path).manifest == (try manifest(json: ticTacToeJSON)))
        do {
            _ = try ManifestParser.parse(contentsOf: directory + "/missing.json")
            Issue.record("a missing file was read")
        } catch {
            #expect(error.problems.map(\.rule) == [.unreadable])
            #expect(error.problems.first?.message.contains("No such file or directory") == true, "\(error)")
        }
        // A directory cannot be read; a file over the limit is refused with its size.
        #expect(throws: ManifestError.self) { try ManifestParser.parse(contentsOf: directory) }
        let large = directory + "/large.json"
        try String(repeating: " ", count: ManifestParser.maxFileSize + 1).write(
            toFile: large, atomically: true, encoding: .utf8)
        do {
            _ = try ManifestParser.parse(contentsOf: large)
            Issue.record("a file over the limit was read")
        } catch {
            #expect(error.problems.map(\.rule) == [.tooLarge])
            #expect(
                error.problems.first?.message.contains("has \(ManifestParser.maxFileSize + 1) bytes") == true,
                "\(error)")
        }
    }
}
