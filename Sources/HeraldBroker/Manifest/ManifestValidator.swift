import HeraldWire

/// A manifest that passed validation, with the warnings found (a missing usage description, say).
package struct ValidatedManifest: Hashable, Sendable {
    package let manifest: Manifest
    package let warnings: [ManifestProblem]
}

/// The manifest rules (docs/permissions.md, "The app manifest"), applied to a document read from JSON or a
/// property list. Every field is checked and every problem reported, so a developer can fix them all in one go.
package enum ManifestValidator {
    /// The longest `name`, in characters.
    package static let maxNameLength = 128
    /// The longest `NSLocalNetworkUsageDescription`, in characters.
    package static let maxUsageDescriptionLength = 1000
    /// The longest executable path (PATH_MAX less the terminating NUL).
    package static let maxPathLength = 4095

    /// Checks `document` and builds the manifest; throws every problem when one or more rules are broken.
    package static func validate(_ document: ManifestDocument) throws(ManifestError) -> ValidatedManifest {
        var check = Check()
        guard case .object(let entries) = document else {
            throw ManifestError(problems: [
                ManifestProblem(
                    field: "", value: document.shortDescription, rule: .notAnObject,
                    message: "a manifest is an object (a JSON object or a property-list <dict>) holding the keys "
                        + keyList + "; found \(document.kindDescription)")
            ])
        }
        let values = check.keys(entries)
        let id = check.id(values[.id])
        let name = check.name(values[.name])
        let executables = check.executables(values[.executables])
        let units = check.units(values[.systemdUnits])
        if (values[.executables] == nil || values[.executables] == .array([]))
            && (values[.systemdUnits] == nil || values[.systemdUnits] == .array([]))
        {
            check.error(
                field: "", value: nil, .noSelector,
                "the manifest must say how to recognise the app's processes: list its absolute paths in "
                    + "\"executables\", its systemd units in \"systemdUnits\", or both")
        }
        let pins = check.pins(values[.executableSHA256], executables: executables)
        let types = check.serviceTypes(values[.bonjourServices])
        let usage = check.usageDescription(values[.usageDescription])
        let entitlements = check.entitlements(values[.entitlements])
        if check.problems.isEmpty, types.isEmpty, !entitlements.contains(Manifest.multicastEntitlement) {
            check.warning(
                field: ManifestKey.bonjourServices.rawValue, value: nil, .noServiceTypes,
                "the app declares no service types and lacks the \(Manifest.multicastEntitlement) "
                    + "entitlement, so only address lookups can ever be allowed; list the types it "
                    + "browses and advertises, such as \"_tictactoe._tcp\"")
        }
        guard check.problems.isEmpty, let id, let name else {
            throw ManifestError(problems: check.problems, warnings: check.warnings)
        }
        let manifest = Manifest(
            id: id, name: name, executables: executables, systemdUnits: units,
            executableSHA256: pins, bonjourServices: types, usageDescription: usage,
            entitlements: entitlements)
        return ValidatedManifest(manifest: manifest, warnings: check.warnings)
    }

    static let keyList = ManifestKey.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")

    /// Info.plist keys that people may carry over, and the manifest key that says the same thing.
    static let infoPlistEquivalents = [
        "CFBundleIdentifier": ManifestKey.id, "CFBundleName": .name, "CFBundleDisplayName": .name,
        "CFBundleExecutable": .executables,
    ]

    /// The problems found so far, and one method per field.
    struct Check {
        var problems: [ManifestProblem] = []
        var warnings: [ManifestProblem] = []

        mutating func error(field: String, value: String?, _ rule: ManifestProblem.Rule, _ message: String) {
            problems.append(ManifestProblem(field: field, value: value, rule: rule, message: message))
        }

        mutating func warning(field: String, value: String?, _ rule: ManifestProblem.Rule, _ message: String) {
            warnings.append(
                ManifestProblem(
                    field: field, value: value, rule: rule, message: message,
                    severity: .warning))
        }

        // MARK: Keys

        /// The value of each known key; unknown and repeated keys are problems.
        mutating func keys(_ entries: [ManifestDocument.Entry]) -> [ManifestKey: ManifestDocument] {
            var values: [ManifestKey: ManifestDocument] = [:]
            for entry in entries {
                let at = entry.line.map { " (line \($0))" } ?? ""
                guard let key = ManifestKey(rawValue: entry.key) else {
                    error(
                        field: entry.key, value: nil, .unknownKey,
                        "unknown key\(at): \(suggestion(forUnknownKey: entry.key))")
                    continue
                }
                if values[key] != nil {
                    error(
                        field: entry.key, value: entry.value.shortDescription, .duplicateKey,
                        "the key appears more than once\(at); keep one")
                    continue
                }
                values[key] = entry.value
            }
            return values
        }

        func suggestion(forUnknownKey key: String) -> String {
            if let equivalent = ManifestValidator.infoPlistEquivalents[key] {
                return "Info.plist keys other than NSBonjourServices and NSLocalNetworkUsageDescription are not "
                    + "part of a manifest; write \"\(equivalent.rawValue)\" instead"
            }
            let close = ManifestKey.allCases.first {
                $0.rawValue.lowercased() == key.lowercased()
                    || editDistance($0.rawValue, key) <= (key.count >= 6 ? 2 : 1)
            }
            let known = "a manifest has only the keys " + ManifestValidator.keyList
            if let close { return "did you mean \"\(close.rawValue)\"? (\(known))" }
            return "remove it; " + known
        }

        // MARK: Fields

        mutating func id(_ value: ManifestDocument?) -> AppID? {
            guard let text = requiredString(value, key: .id, example: "\"org.example.tictactoe\"") else { return nil }
            do {
                return try AppID(text)
            } catch {
                self.error(
                    field: ManifestKey.id.rawValue, value: ManifestDocument.quoted(text), .invalidID,
                    error.description)
                return nil
            }
        }

        mutating func name(_ value: ManifestDocument?) -> String? {
            guard let text = requiredString(value, key: .name, example: "\"Tic Tac Toe\"") else { return nil }
            let field = ManifestKey.name.rawValue
            let shown = ManifestDocument.quoted(text)
            if text.allSatisfy(\.isWhitespace) {
                error(
                    field: field, value: shown, .invalidName,
                    "the name is empty: write what people should see "
                        + "in lists and prompts, such as \"Tic Tac Toe\"")
                return nil
            }
            if text.count > ManifestValidator.maxNameLength {
                error(
                    field: field, value: shown, .invalidName,
                    "the name has \(text.count) characters; at most \(ManifestValidator.maxNameLength) are allowed")
                return nil
            }
            if text.unicodeScalars.contains(where: Self.isControl) {
                error(
                    field: field, value: shown, .invalidName,
                    "the name must be one line of text without control characters")
                return nil
            }
            return text
        }

        mutating func executables(_ value: ManifestDocument?) -> [String] {
            let key = ManifestKey.executables
            var seen: Set<String> = []
            var paths: [String] = []
            for (index, path) in stringArray(value, key: key, example: "[\"/usr/bin/tictactoe\"]") {
                let field = "\(key.rawValue)[\(index)]"
                let shown = ManifestDocument.quoted(path)
                if let problem = Self.pathProblem(path) {
                    error(field: field, value: shown, problem.rule, problem.message)
                } else if !seen.insert(path).inserted {
                    error(field: field, value: shown, .duplicateEntry, "the path is listed twice; keep one")
                } else {
                    paths.append(path)
                }
            }
            return paths
        }

        mutating func units(_ value: ManifestDocument?) -> [String] {
            let key = ManifestKey.systemdUnits
            var seen: Set<String> = []
            var units: [String] = []
            for (index, unit) in stringArray(value, key: key, example: "[\"tictactoe.service\"]") {
                let field = "\(key.rawValue)[\(index)]"
                let shown = ManifestDocument.quoted(unit)
                do {
                    try SystemdUnit.validate(
                        unitName: SystemdUnit.parse(selector: unit).name, allowTemplate: true, allowGlob: true)
                    if seen.insert(unit).inserted {
                        units.append(unit)
                    } else {
                        error(field: field, value: shown, .duplicateEntry, "the unit is listed twice; keep one")
                    }
                } catch {
                    self.error(field: field, value: shown, .invalidUnit, error.description)
                }
            }
            return units
        }

        mutating func pins(_ value: ManifestDocument?, executables: [String]) -> [String: SHA256Digest] {
            let key = ManifestKey.executableSHA256.rawValue
            guard let value else { return [:] }
            guard case .object(let entries) = value else {
                error(
                    field: key, value: value.shortDescription, .wrongType,
                    "must be an object from executable path to its SHA-256 in hexadecimal, such as "
                        + "{\"/usr/bin/tictactoe\": \"9f86d0…\"}; found \(value.kindDescription)")
                return [:]
            }
            var pins: [String: SHA256Digest] = [:]
            var seen: Set<String> = []
            for entry in entries {
                let field = "\(key).\(entry.key)"
                if !seen.insert(entry.key).inserted {
                    error(field: field, value: nil, .duplicateKey, "the path is pinned more than once; keep one")
                    continue
                }
                if !executables.contains(entry.key) {
                    error(
                        field: field, value: ManifestDocument.quoted(entry.key), .pinWithoutExecutable,
                        "a pin applies to one of \"executables\"; add this path there or remove the pin")
                }
                guard case .string(let text) = entry.value else {
                    error(
                        field: field, value: entry.value.shortDescription, .wrongType,
                        "must be a string of 64 hexadecimal digits (sha256sum prints it); found "
                            + entry.value.kindDescription)
                    continue
                }
                guard let digest = SHA256Digest(hex: text) else {
                    error(
                        field: field, value: ManifestDocument.quoted(text), .invalidDigest,
                        "a SHA-256 is 64 hexadecimal digits, as printed by 'sha256sum \(entry.key)'")
                    continue
                }
                pins[entry.key] = digest
            }
            return pins
        }

        mutating func serviceTypes(_ value: ManifestDocument?) -> [ServiceType] {
            let key = ManifestKey.bonjourServices
            var types: [ServiceType] = []
            var spelling: [String] = []
            for (index, text) in stringArray(value, key: key, example: "[\"_tictactoe._tcp\"]") {
                let field = "\(key.rawValue)[\(index)]"
                let shown = ManifestDocument.quoted(text)
                let type: ServiceType
                do {
                    type = try ServiceType(text)
                } catch .serviceEnumerationName {
                    error(
                        field: field, value: shown, .invalidServiceType,
                        "this is the service type enumeration name, not a service type; to browse all types "
                            + "the app needs the entitlement \"\(Manifest.multicastEntitlement)\" in "
                            + "\"entitlements\"")
                    continue
                } catch {
                    self.error(
                        field: field, value: shown, .invalidServiceType,
                        error.description + "; declare types as \"_name._tcp\" or \"_name._udp\"")
                    continue
                }
                if type.hasSubtype {
                    error(
                        field: field, value: shown, .serviceTypeNotPlain,
                        "declare the parent type \"\(type.baseType)\" instead: its subtypes are covered by it")
                    continue
                }
                if type.domain != ServiceType.defaultDomain {
                    error(
                        field: field, value: shown, .serviceTypeNotPlain,
                        "declare the type without a domain, as \"_\(type.name).\(type.transport.rawValue)\": "
                            + "permissions cover the local network (.local) only")
                    continue
                }
                if let first = types.firstIndex(where: { Manifest.sameType($0, type) }) {
                    error(
                        field: field, value: shown, .duplicateEntry,
                        "the same type as \(ManifestDocument.quoted(spelling[first])) at "
                            + "\(key.rawValue)[\(first)] (types ignore case and a trailing dot); keep one")
                    continue
                }
                for rule in type.registrationWarnings {
                    warning(field: field, value: shown, .unregistrableServiceType, rule.description)
                }
                types.append(type)
                spelling.append(text)
            }
            return types
        }

        mutating func usageDescription(_ value: ManifestDocument?) -> String? {
            let field = ManifestKey.usageDescription.rawValue
            guard let value else {
                warning(
                    field: field, value: nil, .missingUsageDescription,
                    "the app has no usage description, so every request it makes will be refused (NoAuth, "
                        + "reason no-usage-description); add a sentence that tells the operator why it uses "
                        + "the local network")
                return nil
            }
            guard case .string(let text) = value else {
                wrongType(
                    field: field, value, expected: "a string",
                    example: "\"Tic Tac Toe looks for players "
                        + "on your local network.\"")
                return nil
            }
            let shown = ManifestDocument.quoted(text)
            if text.allSatisfy(\.isWhitespace) {
                error(
                    field: field, value: shown, .emptyUsageDescription,
                    "the usage description is empty: write a sentence that tells the operator why the app uses "
                        + "the local network, or remove the key")
                return nil
            }
            if text.count > ManifestValidator.maxUsageDescriptionLength {
                error(
                    field: field, value: shown, .invalidText,
                    "the usage description has \(text.count) "
                        + "characters; at most \(ManifestValidator.maxUsageDescriptionLength) are allowed")
                return nil
            }
            if text.unicodeScalars.contains(where: { Self.isControl($0) && $0 != "\n" && $0 != "\t" }) {
                error(
                    field: field, value: shown, .invalidText,
                    "the usage description must not contain control characters other than newlines and tabs")
                return nil
            }
            return text
        }

        mutating func entitlements(_ value: ManifestDocument?) -> [String] {
            let key = ManifestKey.entitlements
            var names: [String] = []
            for (index, name) in stringArray(value, key: key, example: "[\"\(Manifest.multicastEntitlement)\"]") {
                let field = "\(key.rawValue)[\(index)]"
                let shown = ManifestDocument.quoted(name)
                if !Manifest.knownEntitlements.contains(name) {
                    let known = Manifest.knownEntitlements.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                    let close = Manifest.knownEntitlements.first { $0.lowercased() == name.lowercased() }
                    error(
                        field: field, value: shown, .unknownEntitlement,
                        (close.map { "did you mean \"\($0)\"? " } ?? "") + "Herald knows only " + known)
                } else if names.contains(name) {
                    error(field: field, value: shown, .duplicateEntry, "the entitlement is listed twice; keep one")
                } else {
                    names.append(name)
                }
            }
            return names
        }

        // MARK: Shapes

        mutating func requiredString(_ value: ManifestDocument?, key: ManifestKey, example: String) -> String? {
            guard let value else {
                error(field: key.rawValue, value: nil, .missingKey, "the key is required, such as \(example)")
                return nil
            }
            guard case .string(let text) = value else {
                wrongType(field: key.rawValue, value, expected: "a string", example: example)
                return nil
            }
            return text
        }

        /// The strings of an optional array with their indexes; other shapes are problems.
        mutating func stringArray(_ value: ManifestDocument?, key: ManifestKey, example: String) -> [(Int, String)] {
            guard let value else { return [] }
            guard case .array(let items) = value else {
                var hint = ""
                if case .string(let text) = value { hint = "; put it in brackets: [\(ManifestDocument.quoted(text))]" }
                wrongType(field: key.rawValue, value, expected: "an array of strings", example: example, hint: hint)
                return []
            }
            var strings: [(Int, String)] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    wrongType(field: "\(key.rawValue)[\(index)]", item, expected: "a string", example: nil)
                    continue
                }
                strings.append((index, text))
            }
            return strings
        }

        mutating func wrongType(
            field: String, _ value: ManifestDocument, expected: String, example: String?,
            hint: String = ""
        ) {
            let such = example.map { ", such as \($0)" } ?? ""
            error(
                field: field, value: value.shortDescription, .wrongType,
                "must be \(expected)\(such); found \(value.kindDescription)\(hint)")
        }

        static func pathProblem(_ path: String) -> (rule: ManifestProblem.Rule, message: String)? {
            guard path.hasPrefix("/") else {
                return (
                    .relativePath,
                    "the path must be absolute, starting with '/', as the kernel reports "
                        + "executables (for example \"/usr/bin/tictactoe\")"
                )
            }
            if path.utf8.count > ManifestValidator.maxPathLength {
                return (.invalidPath, "the path is longer than \(ManifestValidator.maxPathLength) bytes")
            }
            if path.unicodeScalars.contains(where: { $0.value == 0 }) {
                return (.invalidPath, "the path contains a NUL character")
            }
            if path == "/" || path.hasSuffix("/") {
                return (.invalidPath, "the path ends with '/', so it names a directory; name the executable file")
            }
            let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            if components.contains(where: \.isEmpty) {
                return (.invalidPath, "the path contains '//'; write it with single slashes")
            }
            if components.first == "proc" {
                return (
                    .invalidPath,
                    "paths under /proc name processes, not programs; the kernel reports an "
                        + "executable by its real path (see 'readlink -f /proc/PID/exe')"
                )
            }
            if components.contains(where: { $0 == "." || $0 == ".." }) {
                return (
                    .invalidPath,
                    "the path contains '.' or '..'; write the plain path the kernel reports "
                        + "(see 'readlink -f')"
                )
            }
            return nil
        }

        static func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }

        /// Levenshtein distance, for "did you mean" suggestions on short keys.
        func editDistance(_ a: String, _ b: String) -> Int {
            let a = Array(a.lowercased())
            let b = Array(b.lowercased())
            if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
            var previous = Array(0...b.count)
            for i in 1...a.count {
                var current = [i] + [Int](repeating: 0, count: b.count)
                for j in 1...b.count {
                    let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                    current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                }
                previous = current
            }
            return previous[b.count]
        }
    }
}
