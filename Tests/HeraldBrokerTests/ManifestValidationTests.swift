import HeraldBroker
import HeraldWire
import Testing

@Suite("Manifest validation")
struct ManifestValidationTests {
    @Test("A manifest with many mistakes is rejected with every one of them listed, field by field")
    func everyProblemAtOnce() {
        let text = """
            {
              "id": "tictactoe",
              "name": "",
              "executables": ["bin/tictactoe", "/usr/bin/tictactoe", "/usr/bin/tictactoe"],
              "systemdUnits": ["tictactoe.socket"],
              "NSBonjourServices": ["_tictactoe._tcp", "_TicTacToe._tcp.", "_x+y._tcp", "_printer._sub._http._tcp"],
              "NSLocalNetworkUsageDescription": "   ",
              "entitlements": ["com.apple.developer.networking.Multicast"],
              "colour": "red",
              "id": "org.example.again"
            }
            """
        let found = problems(text)
        #expect(
            found.map(\.field) == [
                "colour", "id", "id", "name", "executables[0]", "executables[2]", "systemdUnits[0]",
                "NSBonjourServices[1]", "NSBonjourServices[2]", "NSBonjourServices[3]",
                "NSLocalNetworkUsageDescription",
                "entitlements[0]",
            ])
        #expect(
            found.map(\.rule) == [
                .unknownKey, .duplicateKey, .invalidID, .invalidName, .relativePath, .duplicateEntry, .invalidUnit,
                .duplicateEntry, .invalidServiceType, .serviceTypeNotPlain, .emptyUsageDescription, .unknownEntitlement,
            ])
        #expect(found.allSatisfy { $0.severity == .error })
    }

    @Test("The rejection lists each problem on its own line with field, value and rule, and says nothing was stored")
    func rejectionText() throws {
        do {
            _ = try ManifestParser.parse(
                Array(
                    manifestJSON([
                        "NSBonjourServices": "[\"_tictactoe._tcp\", \"_tictactoe._TCP\"]",
                        "executables": "[\"tictactoe\"]",
                    ]).utf8))
            Issue.record("accepted")
        } catch {
            let lines = error.description.split(separator: "\n")
            #expect(lines[0] == "manifest rejected (2 problems; nothing was stored):")
            #expect(lines[1].hasPrefix("  executables[0] \"tictactoe\": the path must be absolute"))
            #expect(
                lines[2] == "  NSBonjourServices[1] \"_tictactoe._TCP\": the same type as \"_tictactoe._tcp\" at "
                    + "NSBonjourServices[0] (types ignore case and a trailing dot); keep one")
        }
    }

    /// One manifest text per rule that breaks it (alone), so that no rule goes untested.
    static let examples: [ManifestProblem.Rule: String] = [
        .syntax: "{\"id\": }",
        .tooLarge: String(repeating: " ", count: ManifestParser.maxFileSize + 1),
        .notAnObject: "[\"_tictactoe._tcp\"]",
        .unknownKey: manifestJSON(["version": "1"]),
        .duplicateKey: "{\"name\": \"X\", " + manifestJSON([:]).dropFirst(),
        .missingKey: manifestJSON(["name": "<absent>"]),
        .wrongType: manifestJSON(["entitlements": "true"]),
        .invalidID: manifestJSON(["id": "\"tictactoe\""]),
        .invalidName: manifestJSON(["name": "\"Tic\\nTac\""]),
        .invalidText: manifestJSON(["NSLocalNetworkUsageDescription": "\"\\u001b[31mred\""]),
        .relativePath: manifestJSON(["executables": "[\"usr/bin/tictactoe\"]"]),
        .invalidPath: manifestJSON(["executables": "[\"/usr/bin/tictactoe/\"]"]),
        .invalidUnit: manifestJSON(["systemdUnits": "[\"tictactoe.timer\"]"]),
        .noSelector: manifestJSON(["executables": "<absent>"]),
        .invalidDigest: manifestJSON(["executableSHA256": "{\"/usr/bin/tictactoe\": \"abc\"}"]),
        .pinWithoutExecutable: manifestJSON([
            "executableSHA256": "{\"/usr/bin/other\": \"\(String(repeating: "a", count: 64))\"}"
        ]),
        .invalidServiceType: manifestJSON(["NSBonjourServices": "[\"_tic.tac._tcp\"]"]),
        .serviceTypeNotPlain: manifestJSON(["NSBonjourServices": "[\"_tictactoe._tcp.example.\"]"]),
        .duplicateEntry: manifestJSON(["systemdUnits": "[\"a.service\", \"a.service\"]"]),
        .emptyUsageDescription: manifestJSON(["NSLocalNetworkUsageDescription": "\" \""]),
        .unknownEntitlement: manifestJSON(["entitlements": "[\"multicast\"]"]),
        .missingUsageDescription: manifestJSON(["NSLocalNetworkUsageDescription": "<absent>"]),
        .noServiceTypes: manifestJSON(["NSBonjourServices": "[]"]),
        .unregistrableServiceType: manifestJSON(["NSBonjourServices": "[\"_barrierServerZeroconf._tcp\"]"]),
    ]

    @Test("Every rule has an example that breaks it and nothing else", arguments: ManifestProblem.Rule.allCases)
    func everyRule(_ rule: ManifestProblem.Rule) throws {
        if rule == .unreadable { return }  // a file that cannot be read: see the file tests
        let text = try #require(Self.examples[rule], "no example for \(rule)")
        do {
            let result = try ManifestParser.parse(Array(text.utf8))
            #expect(result.warnings.map(\.rule) == [rule])
        } catch {
            #expect(error.problems.map(\.rule) == [rule], "\(error)")
            #expect(error.problems.allSatisfy { !$0.message.isEmpty })
        }
    }

    @Test(
        "The id must be a reverse-DNS identifier",
        arguments: [
            ("\"tictactoe\"", "no dot"), ("\"org..example\"", "empty part"), ("\".org.example\"", "empty part"),
            ("\"org.example.tic tac toe\"", "not allowed"), ("\"org.-example\"", "hyphen"), ("\"\"", "empty"),
            ("\"org.\(String(repeating: "x", count: 64))\"", "at most 63"),
        ])
    func badIDs(value: String, expected: String) {
        let found = problems(manifestJSON(["id": value]))
        #expect(found.map(\.rule) == [.invalidID])
        #expect(found.first?.message.contains(expected) == true, "\(found)")
    }

    @Test("Valid ids keep their spelling and compare ignoring case")
    func idCase() throws {
        let upper = try AppID("Org.Example.TicTacToe")
        #expect(upper.rawValue == "Org.Example.TicTacToe")
        #expect(upper == (try AppID("org.example.tictactoe")))
        #expect(try AppID("io.github.some_user.app-2").rawValue == "io.github.some_user.app-2")
    }

    @Test("Required keys, and values of the wrong kind, are named with what belongs there")
    func missingAndWrongTypes() {
        let missing = problems(manifestJSON(["id": "<absent>", "name": "<absent>"]))
        #expect(missing.map(\.rule) == [.missingKey, .missingKey])
        #expect(missing[0].message == "the key is required, such as \"org.example.tictactoe\"")

        let wrong = problems(
            manifestJSON([
                "name": "true", "executables": "\"/usr/bin/tictactoe\"", "systemdUnits": "[1]",
                "NSBonjourServices": "{}", "NSLocalNetworkUsageDescription": "null", "executableSHA256": "[]",
            ]))
        #expect(
            wrong.map(\.field) == [
                "name", "executables", "systemdUnits[0]", "executableSHA256",
                "NSBonjourServices", "NSLocalNetworkUsageDescription",
            ])
        #expect(wrong.allSatisfy { $0.rule == .wrongType })
        #expect(wrong[1].message.contains("put it in brackets: [\"/usr/bin/tictactoe\"]"))
        #expect(wrong[0].message == "must be a string, such as \"Tic Tac Toe\"; found a boolean")
    }

    @Test("A manifest must name at least one executable or systemd unit")
    func selectorRequired() {
        #expect(rules(manifestJSON(["executables": "<absent>"])) == [.noSelector])
        #expect(rules(manifestJSON(["executables": "[]", "systemdUnits": "[]"])) == [.noSelector])
        #expect(rules(manifestJSON(["executables": "<absent>", "systemdUnits": "[\"tictactoe.service\"]"])) == [])
    }

    @Test(
        "Executables are plain absolute paths",
        arguments: [
            ("tictactoe", ManifestProblem.Rule.relativePath), ("./tictactoe", .relativePath),
            ("/usr/bin/", .invalidPath), ("/usr//bin/tictactoe", .invalidPath),
            ("/usr/bin/../bin/tictactoe", .invalidPath),
            ("/usr/./bin/tictactoe", .invalidPath), ("/", .invalidPath),
        ])
    func executablePaths(path: String, rule: ManifestProblem.Rule) {
        #expect(rules(manifestJSON(["executables": "[\"\(path)\"]"])) == [rule])
    }

    @Test(
        "systemd units are service or scope names, templates allowed for services",
        arguments: [
            ("tictactoe.service", nil), ("app-tictactoe.scope", nil), ("game@.service", nil),
            ("game@alice.service", nil),
            ("tictactoe", "'.service' or '.scope'"), ("tictactoe.socket", "runs no processes"),
            ("games.slice", "runs no processes"), ("tic tac.service", "cannot appear"),
            ("a@b@c.service", "at most one"),
            ("@.service", "before the '@'"), ("game@.scope", "scopes cannot be templates"), (".service", "empty"),
            ("user:app-tictactoe.scope", nil), ("user:game@.service", nil), ("user:", "empty"),
            ("user:tic tac.service", "cannot appear"),
            ("user:app-*-tictactoe-*.scope", nil), ("user:app-flatpak-org.example.Game-*.scope", nil),
            ("tictactoe-*.service", nil), ("*.scope", "at least 3"), ("a*b.scope", "at least 3"),
            ("game@*.service", "cannot also be a template"),
        ] as [(String, String?)])
    func unitNames(unit: String, expected: String?) {
        let found = problems(manifestJSON(["systemdUnits": "[\"\(unit)\"]"]))
        if let expected {
            #expect(found.map(\.rule) == [.invalidUnit])
            #expect(found.first?.message.contains(expected) == true, "\(found)")
        } else {
            #expect(found.isEmpty, "\(found)")
        }
    }

    @Test("Service types are DNS-SD labels, ignore case and a trailing dot, and are declared plain")
    func serviceTypes() throws {
        let ok = try manifest(
            json: manifestJSON(["NSBonjourServices": "[\"_Game._UDP\", \"_http._tcp.local.\", \"_a-b._tcp.\"]"]))
        #expect(ok.bonjourServices.map(\.description) == ["_Game._udp", "_http._tcp", "_a-b._tcp"])

        let cases: [(String, ManifestProblem.Rule, String)] = [
            ("_\(String(repeating: "x", count: 63))._tcp", .invalidServiceType, "63"),
            ("_a b._tcp", .invalidServiceType, "letters, digits, hyphens and underscores"),
            ("_game._sctp", .invalidServiceType, "'_tcp' or '_udp'"),
            ("game._tcp", .invalidServiceType, "underscore"),
            ("_game", .invalidServiceType, "no transport"),
            ("_services._dns-sd._udp", .invalidServiceType, "com.apple.developer.networking.multicast"),
            ("_printer._sub._http._tcp", .serviceTypeNotPlain, "subtypes are covered"),
            ("_http._tcp.example.com", .serviceTypeNotPlain, "without a domain"),
        ]
        for (type, rule, expected) in cases {
            let found = problems(manifestJSON(["NSBonjourServices": "[\"\(type)\"]"]))
            #expect(found.map(\.rule) == [rule], "\(type)")
            #expect(found.first?.message.contains(expected) == true, "\(type): \(found)")
        }
        #expect(rules(manifestJSON(["NSBonjourServices": "[\"_game._udp\", \"_GAME._udp.\"]"])) == [.duplicateEntry])
        // The same name over the other transport is another type.
        #expect(rules(manifestJSON(["NSBonjourServices": "[\"_game._udp\", \"_game._tcp\"]"])) == [])
    }

    /// Avahi and mDNSResponder accept service names that RFC 6335 would not register (a real app in Debian,
    /// barrier, uses `_barrierServerZeroconf._tcp`): a manifest may declare them, with a warning each.
    @Test("Service types that break RFC 6335's registration rules are declared with a warning")
    func unregistrableServiceTypes() throws {
        let cases: [(String, String)] = [
            ("_barrierServerZeroconf._tcp", "21 characters"), ("_a--b._tcp", "two hyphens"),
            ("_-ab._tcp", "begins or ends with a hyphen"), ("_123._tcp", "no letter"), ("_x_y._udp", "underscore"),
        ]
        for (type, expected) in cases {
            let result = try ManifestParser.parse(Array(manifestJSON(["NSBonjourServices": "[\"\(type)\"]"]).utf8))
            #expect(result.manifest.bonjourServices == [try ServiceType(type)], "\(type)")
            #expect(result.warnings.map(\.rule) == [.unregistrableServiceType], "\(type)")
            #expect(result.warnings.first?.field == "NSBonjourServices[0]")
            #expect(result.warnings.first?.message.contains(expected) == true, "\(type): \(result.warnings)")
        }
        let barrier = try Manifest(
            id: "org.debian.barrier", name: "Barrier", executables: ["/usr/bin/barrier"],
            bonjourServices: ["_barrierServerZeroconf._tcp", "_barrierClientZeroconf._tcp"],
            usageDescription: "Barrier finds the computers it shares a keyboard with.")
        #expect(barrier.declares(try ServiceType("_barrierserverzeroconf._TCP")))
    }

    @Test("SHA-256 pins are 64 hex digits for a listed executable")
    func pins() throws {
        let digest = String(repeating: "0f", count: 32)
        let ok = try manifest(
            json: manifestJSON(["executableSHA256": "{\"/usr/bin/tictactoe\": \"\(digest.uppercased())\"}"]))
        #expect(ok.executableSHA256["/usr/bin/tictactoe"]?.hex == digest)

        let found = problems(
            manifestJSON([
                "executableSHA256": """
                {"/usr/bin/other": "\(digest)", "/usr/bin/tictactoe": "xyz", "/usr/bin/tictactoe": "\(digest)"}
                """
            ]))
        #expect(found.map(\.rule) == [.pinWithoutExecutable, .invalidDigest, .duplicateKey])
        #expect(found[1].message.contains("sha256sum /usr/bin/tictactoe"))
    }

    @Test("The usage description, when present, says something")
    func usageDescription() {
        #expect(rules(manifestJSON(["NSLocalNetworkUsageDescription": "\"\""])) == [.emptyUsageDescription])
        #expect(rules(manifestJSON(["NSLocalNetworkUsageDescription": "\"Finds\\u0007players\""])) == [.invalidText])
        #expect(rules(manifestJSON(["NSLocalNetworkUsageDescription": "\"Finds players.\\nAnd games.\""])) == [])
        let long = String(repeating: "a", count: ManifestValidator.maxUsageDescriptionLength + 1)
        #expect(rules(manifestJSON(["NSLocalNetworkUsageDescription": "\"\(long)\""])) == [.invalidText])
    }

    @Test("Only known entitlements are accepted, each once")
    func entitlements() {
        let multicast = "\"com.apple.developer.networking.multicast\""
        #expect(rules(manifestJSON(["entitlements": "[\(multicast)]"])) == [])
        #expect(rules(manifestJSON(["entitlements": "[\(multicast), \(multicast)]"])) == [.duplicateEntry])
        let unknown = problems(manifestJSON(["entitlements": "[\"com.apple.developer.networking.wifi-info\"]"]))
        #expect(unknown.map(\.rule) == [.unknownEntitlement])
        #expect(unknown[0].message.contains("Herald knows only \"com.apple.developer.networking.multicast\""))
    }

    @Test("Unknown keys are rejected with a suggestion when they look like a known one")
    func unknownKeys() {
        let found = problems(
            manifestJSON([
                "systemdunits": "[]", "CFBundleIdentifier": "\"x\"", "NSBonjourService": "[]",
                "colour": "\"red\"",
            ]))
        #expect(found.map(\.field) == ["CFBundleIdentifier", "NSBonjourService", "colour", "systemdunits"])
        #expect(found.allSatisfy { $0.rule == .unknownKey })
        #expect(found[0].message.contains("write \"id\" instead"))
        #expect(found[1].message.contains("did you mean \"NSBonjourServices\"?"))
        #expect(found[2].message.contains("remove it"))
        #expect(found[3].message.contains("did you mean \"systemdUnits\"?"))
    }

    @Test("A manifest built in code goes through the same rules")
    func builtInCode() throws {
        #expect(throws: ManifestError.self) {
            try Manifest(id: "x", name: "X", executables: ["x"], bonjourServices: ["_bad type._tcp"])
        }
        let app = try Manifest(
            id: "org.example.x", name: "X", systemdUnits: ["x.service"], bonjourServices: ["_x._tcp"],
            usageDescription: "Why.")
        #expect(app.declares(try ServiceType("_X._TCP.")))
        #expect(app.declares(try ServiceType("_printer._sub._x._tcp")))
        #expect(!app.declares(try ServiceType("_x._udp")))
    }

    @Test("A changed manifest lists what changed")
    func changeSummary() throws {
        let old = try Manifest(
            id: "org.example.x", name: "X", executables: ["/usr/bin/x"],
            bonjourServices: ["_x._tcp", "_y._udp"], usageDescription: "Why.")
        let new = try Manifest(
            id: "org.example.x", name: "X Pro", executables: ["/usr/bin/x"], systemdUnits: ["x.service"],
            bonjourServices: ["_X._tcp", "_z._udp"], usageDescription: "Because.",
            entitlements: [Manifest.multicastEntitlement])
        #expect(
            new.changes(from: old) == [
                "name: \"X\" → \"X Pro\"", "systemdUnits: +x.service", "NSBonjourServices: +_z._udp -_y._udp",
                "NSLocalNetworkUsageDescription: changed", "entitlements: +com.apple.developer.networking.multicast",
            ])
        #expect(old.changes(from: old).isEmpty)
    }
}
