// libFuzzer target for app manifests (Sources/HeraldBroker/Manifest): the executable target `manifest-fuzzer`, which
// Fuzz/build.sh builds with libFuzzer and AddressSanitizer (HeraldXML reads XML with the system's libexpat, which is
// linked as it is). It uses HeraldBroker's public API, and `Manifest.json`, a package-wide helper.
//
// Input: a manifest file's bytes, read as JSON, as an XML property list, and with the format detected.
// Every check states an invariant that holds for every input; a broken one traps with fatalError, which
// libFuzzer records as a crash. A file that is refused with problems is fine.

import FuzzSupport
import HeraldBroker
import HeraldWire

/// libFuzzer's driver when built by Fuzz/build.sh; otherwise a replay of the files given (`FuzzSupport.main`).
@main
enum Main {
    static func main() { FuzzSupport.main(ManifestFuzzer.run) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ManifestFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

enum ManifestFuzzer {
    static func run(_ input: [UInt8]) {
        let detected = ManifestParser.detectFormat(input)
        for format in [ManifestFormat.json, .propertyList] {
            let document: ManifestDocument
            do {
                document = try ManifestParser.document(input, format: format)
            } catch {
                checkRefusal(error, input: input)
                // A file that cannot be read cannot be valid either.
                guard (try? ManifestParser.parse(input, format: format)) == nil else {
                    fail("parse(\(format)) accepts a file whose document cannot be read")
                }
                continue
            }
            checkDocument(document, format: format)
            let result: ValidatedManifest?
            do {
                result = try ManifestParser.parse(input, format: format)
            } catch {
                checkRefusal(error, input: input)
                result = nil
                guard (try? ManifestValidator.validate(document)) == nil else {
                    fail("the validator accepts the document that parse(\(format)) refused")
                }
            }
            if let result {
                guard (try? ManifestValidator.validate(document)) == result else {
                    fail("parse(\(format)) and validate(document) disagree")
                }
                checkManifest(result)
            }
            if format == detected {
                guard (try? ManifestParser.parse(input)) == result else {
                    fail("parse with the detected format \(format) differs from parse(format: \(format))")
                }
            }
        }
    }

    /// A refusal names at least one problem, each an error described in words.
    static func checkRefusal(_ error: ManifestError, input: [UInt8]) {
        guard !error.problems.isEmpty, !error.description.isEmpty else {
            fail("a refused manifest has no problems or no description")
        }
        for problem in error.problems
        where problem.severity != .error || problem.message.isEmpty || problem.description.isEmpty {
            fail("a problem of a refused manifest is not an error with a message: \(problem)")
        }
        for warning in error.warnings where warning.severity != .warning {
            fail("a warning has severity \(warning.severity)")
        }
    }

    // MARK: - Manifests

    /// A valid manifest: its canonical JSON reads back to the same manifest and the same text, building it
    /// from its values gives the same manifest, and it has no changes from itself.
    static func checkManifest(_ result: ValidatedManifest) {
        let manifest = result.manifest
        for warning in result.warnings where warning.severity != .warning || warning.description.isEmpty {
            fail("a warning of a valid manifest is not a warning with a description: \(warning)")
        }
        let text = manifest.jsonText
        let again: ValidatedManifest
        do {
            again = try ManifestParser.parse(Array(text.utf8), format: .json)
        } catch {
            fail("the canonical JSON of a valid manifest is refused: \(error)\n\(text)")
        }
        guard again.manifest == manifest, again.manifest.id.rawValue == manifest.id.rawValue,
            again.warnings == result.warnings
        else {
            fail("parse(jsonText) differs from the manifest\n\(text)")
        }
        guard again.manifest.jsonText == text else {
            fail("jsonText is not stable\n\(text)\n\(again.manifest.jsonText)")
        }
        guard ManifestParser.detectFormat(Array(text.utf8)) == .json else { fail("jsonText is not detected as JSON") }
        guard manifest.changes(from: manifest).isEmpty else { fail("a manifest has changes from itself") }

        let rebuilt: Manifest
        do {
            rebuilt = try Manifest(
                id: manifest.id.rawValue, name: manifest.name, executables: manifest.executables,
                systemdUnits: manifest.systemdUnits,
                executableSHA256: manifest.executableSHA256.mapValues(\.hex),
                bonjourServices: manifest.bonjourServices.map(\.description),
                usageDescription: manifest.usageDescription,
                entitlements: manifest.entitlements)
        } catch {
            fail("Manifest(values of a valid manifest) throws \(error)")
        }
        guard rebuilt == manifest else { fail("Manifest(values of a valid manifest) differs from it") }
        for type in manifest.bonjourServices where !manifest.declares(type) {
            fail("a manifest does not declare its own service type \(type)")
        }
    }

    // MARK: - Documents

    /// Any document read: written out again as JSON it reads back the same (line numbers aside); written as
    /// a property list too, when it holds only what a property list can say.
    static func checkDocument(_ document: ManifestDocument, format: ManifestFormat) {
        _ = document.kindDescription
        _ = document.shortDescription
        let plain = withoutLines(document)
        if let json = renderJSON(document) {
            do {
                let again = try JSONDocumentReader.read(Array(json.utf8))
                guard withoutLines(again) == plain else {
                    fail("a \(format) document written as JSON reads back differently\n\(json)")
                }
            } catch {
                fail("a \(format) document written as JSON does not read: \(error)\n\(json)")
            }
        }
        if let plist = renderPropertyList(document) {
            do {
                let again = try PropertyListDocumentReader.read(Array(plist.utf8))
                guard withoutLines(again) == plain else {
                    fail("a \(format) document written as a property list reads back differently\n\(plist)")
                }
            } catch {
                fail("a \(format) document written as a property list does not read: \(error)\n\(plist)")
            }
        }
    }

    static func withoutLines(_ document: ManifestDocument) -> ManifestDocument {
        switch document {
        case .array(let items): return .array(items.map(withoutLines))
        case .object(let entries): return .object(entries.map { .init(key: $0.key, value: withoutLines($0.value)) })
        default: return document
        }
    }

    /// JSON text for a document, or nil when it holds something JSON cannot say (a property list's
    /// `<date>`/`<data>`, a number that is not JSON's).
    static func renderJSON(_ document: ManifestDocument) -> String? {
        switch document {
        case .string(let text): return Manifest.json(text)
        case .number(let text): return isJSONNumber(text) ? text : nil
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .other: return nil
        case .array(let items):
            var parts: [String] = []
            for item in items {
                guard let part = renderJSON(item) else { return nil }
                parts.append(part)
            }
            return "[" + parts.joined(separator: ",") + "]"
        case .object(let entries):
            var parts: [String] = []
            for entry in entries {
                guard let value = renderJSON(entry.value) else { return nil }
                parts.append(Manifest.json(entry.key) + ":\n" + value)
            }
            return "{" + parts.joined(separator: ",\n") + "}"
        }
    }

    /// An XML property list for a document, or nil when it holds what a property list cannot say (null, a
    /// number (integer or real is not known), text XML cannot carry).
    static func renderPropertyList(_ document: ManifestDocument) -> String? {
        guard let body = plistValue(document) else { return nil }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n" + body + "\n</plist>\n"
    }

    static func plistValue(_ document: ManifestDocument) -> String? {
        switch document {
        case .string(let text): return FuzzSupport.escapeXML(text).map { "<string>" + $0 + "</string>" }
        case .bool(let value): return value ? "<true/>" : "<false/>"
        case .null, .number, .other: return nil
        case .array(let items):
            var parts: [String] = []
            for item in items {
                guard let part = plistValue(item) else { return nil }
                parts.append(part)
            }
            return "<array>" + parts.joined(separator: "\n") + "</array>"
        case .object(let entries):
            var parts: [String] = []
            for entry in entries {
                guard let key = FuzzSupport.escapeXML(entry.key), let value = plistValue(entry.value) else {
                    return nil
                }
                parts.append("<key>" + key + "</key>\n" + value)
            }
            return "<dict>" + parts.joined(separator: "\n") + "</dict>"
        }
    }

    /// RFC 8259 §6 number grammar.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") { bytes = bytes.dropFirst() } else if digits() == 0 { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            if digits() == 0 { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            if digits() == 0 { return false }
        }
        return bytes.isEmpty
    }

    static func fail(_ message: String) -> Never {
        fatalError("HeraldBroker manifest fuzz invariant broken: " + message)
    }
}
