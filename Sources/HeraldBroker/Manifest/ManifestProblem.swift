/// One thing wrong (or worth a warning) in a manifest: the field, the value found there, and the rule it
/// breaks, worded so that a person knows what to change.
package struct ManifestProblem: Hashable, Sendable, CustomStringConvertible {
    /// Whether the problem stops the manifest from being registered.
    package enum Severity: String, Hashable, Sendable {
        /// The manifest is rejected.
        case error
        /// The manifest is accepted, but something will not work as the developer may expect.
        case warning
    }

    /// The rule broken, as a stable code for tests, scripts and `--json` output.
    package enum Rule: String, Hashable, Sendable, CaseIterable {
        /// The file could not be read at all (missing, not permitted).
        case unreadable
        /// The file could not be read as JSON or as an XML property list.
        case syntax
        /// The file is larger than a manifest can be.
        case tooLarge = "too-large"
        /// The top level is not an object (dictionary).
        case notAnObject = "not-an-object"
        /// A key that manifests do not have.
        case unknownKey = "unknown-key"
        /// The same key twice.
        case duplicateKey = "duplicate-key"
        /// A required key is missing.
        case missingKey = "missing-key"
        /// A value of the wrong kind (a number where a string belongs, say).
        case wrongType = "wrong-type"
        /// `id` is not a reverse-DNS identifier.
        case invalidID = "invalid-id"
        /// `name` is empty, too long or holds control characters.
        case invalidName = "invalid-name"
        /// `NSLocalNetworkUsageDescription` is too long or holds control characters.
        case invalidText = "invalid-text"
        /// An executable path is not absolute.
        case relativePath = "relative-path"
        /// An executable path is absolute but not in plain form (`..`, `//`, a trailing slash, NUL).
        case invalidPath = "invalid-path"
        /// A systemd unit name that is not a service or scope unit name.
        case invalidUnit = "invalid-unit"
        /// Neither `executables` nor `systemdUnits` names anything.
        case noSelector = "no-selector"
        /// A SHA-256 pin that is not 64 hexadecimal digits.
        case invalidDigest = "invalid-digest"
        /// A SHA-256 pin for a path that `executables` does not list.
        case pinWithoutExecutable = "pin-without-executable"
        /// A service type that breaks RFC 6335 / RFC 6763 naming.
        case invalidServiceType = "invalid-service-type"
        /// A service type with a domain other than `local`, or with a subtype.
        case serviceTypeNotPlain = "service-type-not-plain"
        /// The same entry twice in a list (service types compare ignoring case and a trailing dot).
        case duplicateEntry = "duplicate-entry"
        /// `NSLocalNetworkUsageDescription` is present but says nothing.
        case emptyUsageDescription = "empty-usage-description"
        /// An entitlement Herald does not know.
        case unknownEntitlement = "unknown-entitlement"
        /// Warning: no `NSLocalNetworkUsageDescription`; every request of the app will be refused.
        case missingUsageDescription = "missing-usage-description"
        /// Warning: no service types and no multicast entitlement; only address lookups can be allowed.
        case noServiceTypes = "no-service-types"
        /// Warning: a service type accepted although it breaks RFC 6335 §5.1's rules for registered names (more
        /// than 15 characters, say), as Avahi and mDNSResponder accept it.
        case unregistrableServiceType = "unregistrable-service-type"
    }

    /// The field, as a path into the manifest: `NSBonjourServices[2]`, `executableSHA256./usr/bin/x`;
    /// empty for the file as a whole.
    package var field: String
    /// The offending value as found in the file, rendered for people (strings in quotes); nil when absent.
    package var value: String?
    package var rule: Rule
    /// What is wrong and how to fix it.
    package var message: String
    package var severity: Severity

    package init(field: String, value: String?, rule: Rule, message: String, severity: Severity = .error) {
        self.field = field
        self.value = value
        self.rule = rule
        self.message = message
        self.severity = severity
    }

    /// `NSBonjourServices[1] "_a_b._tcp": service name 'a_b' may contain only …`, with `warning: ` in front for a
    /// warning.
    package var description: String { (severity == .warning ? "warning: " : "") + text }

    /// The field, its value and the message, without the severity (for a list already titled "warnings").
    package var text: String {
        var head = field.isEmpty ? "manifest" : field
        if let value { head += " " + value }
        return head + ": " + message
    }
}

/// A manifest that does not validate: every problem found, so that all can be fixed in one go.
package struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems that reject the manifest, in file order; never empty.
    package var problems: [ManifestProblem]
    /// Warnings found along the way (they would not have rejected the manifest on their own).
    package var warnings: [ManifestProblem]

    package init(problems: [ManifestProblem], warnings: [ManifestProblem] = []) {
        self.problems = problems
        self.warnings = warnings
    }

    /// One problem per line, after a summary line.
    package var description: String {
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        return
            (["manifest rejected (\(count); nothing was stored):"]
            + (problems + warnings).map { "  " + $0.description }).joined(separator: "\n")
    }
}
