/// The systemd unit a process runs in, read from its cgroup path: a service (`tictactoe.service`) or a scope
/// (`app-foo.scope`), run by the system manager or by a user's manager (`user@1000.service`).
///
/// This is how interpreted apps are recognised, whose executable is the interpreter. A manifest's selector
/// `tictactoe.service` names a unit of the system manager, which only root can create. A user names the units of
/// their own manager freely (`systemd-run --user --unit=…`), so such a unit identifies nothing unless the
/// manifest asks for it in so many words: `user:app-tictactoe.scope` matches that unit under any user's manager,
/// as weakly as an executable path the user can write to.
package struct SystemdUnit: Hashable, Sendable, CustomStringConvertible {
    /// Which systemd instance runs the unit.
    package enum Manager: Hashable, Sendable {
        /// PID 1, the system manager.
        case system
        /// The per-user manager `user@UID.service`.
        case user(uid: UInt32)
    }

    /// The unit types that hold processes and so can identify one.
    package static let processUnitSuffixes = [".service", ".scope"]
    /// systemd's limit on a unit name (UNIT_NAME_MAX less the terminating NUL).
    package static let maxNameLength = 255

    /// The unit name, unescaped from the cgroup path (`tictactoe.service`).
    package let name: String
    package let manager: Manager

    package init(name: String, manager: Manager = .system) {
        self.name = name
        self.manager = manager
    }

    package var description: String {
        switch manager {
        case .system: return name
        case .user(let uid): return "\(name) (user manager of uid \(uid))"
        }
    }

    /// The prefix of a selector that names a unit of a user's manager rather than the system's.
    package static let userSelectorPrefix = "user:"

    /// A selector's unit name, and whether it names a unit of a user's manager (`user:NAME`).
    package static func parse(selector: String) -> (name: String, ofUser: Bool) {
        selector.hasPrefix(userSelectorPrefix)
            ? (String(selector.dropFirst(userSelectorPrefix.count)), true) : (selector, false)
    }

    /// True when a manifest's `systemdUnits` entry names this unit: a unit of the same manager (the system's, or a
    /// user's for `user:NAME`) with the same name exactly, an instance (`game@alice.service`) of a template
    /// (`game@.service`), or a name that a pattern with `*` matches (`app-*-tictactoe-*.scope`).
    package func matches(selector: String) -> Bool {
        let (pattern, ofUser) = Self.parse(selector: selector)
        guard ofUser == (manager != .system) else { return false }
        return Self.unitName(name, matches: pattern)
    }

    /// True when the unit name `name` is `pattern`, or an instance of the template `pattern`.
    static func unitName(_ name: String, matches pattern: String) -> Bool {
        if pattern == name { return true }
        if pattern.contains(globCharacter) { return glob(Array(pattern.utf8)[...], matches: Array(name.utf8)[...]) }
        guard let at = pattern.firstIndex(of: "@"), pattern[pattern.index(after: at)...].hasPrefix("."),
            let nameAt = name.firstIndex(of: "@")
        else { return false }
        let templatePrefix = pattern[..<at]
        let templateSuffix = pattern[pattern.index(after: at)...]
        let instance = name[name.index(after: nameAt)...]
        return name[..<nameAt] == templatePrefix && instance.hasSuffix(templateSuffix)
            && instance.count > templateSuffix.count
            && !instance.dropLast(templateSuffix.count).contains(".")
    }

    // MARK: - Reading /proc/PID/cgroup

    /// The unit of a process from the text of `/proc/PID/cgroup`: the unified (cgroup v2) line
    /// `0::/system.slice/tictactoe.service`, else the `name=systemd` line of a cgroup v1 hierarchy.
    /// Nil when the process is in no unit (a cgroup that systemd does not manage, or a removed one).
    package static func parse(procCgroup text: String) -> SystemdUnit? {
        var unified: Substring?
        var legacy: Substring?
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                unified = fields[2]
            } else if fields[1] == "name=systemd" {
                legacy = fields[2]
            }
        }
        if let unified, let unit = SystemdUnit(cgroupPath: String(unified)) { return unit }
        if let legacy { return SystemdUnit(cgroupPath: String(legacy)) }
        return nil
    }

    /// The unit of a cgroup path such as `/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.scope`.
    ///
    /// systemd lays out slices, then one unit; below a unit only that unit's own (delegated) cgroups follow,
    /// whose names prove nothing — except below `user@UID.service`, where the user's manager lays out its own
    /// slices and units again. A path that leaves that layout, or a cgroup marked ` (deleted)`, gives nil.
    package init?(cgroupPath path: String) {
        if path.hasSuffix(" (deleted)") { return nil }
        var manager = Manager.system  // whose layout the next component belongs to
        var unit: SystemdUnit?  // the deepest unit found so far
        var expectingUnit = true  // false once inside a unit's own cgroups
        for raw in path.split(separator: "/") {
            let component = Self.cgroupUnescaped(raw)
            if !expectingUnit {
                // Inside a unit only the user manager lays out slices and units of its own.
                guard let current = unit, current.manager == .system,
                    let uid = Self.userManagerUID(current.name)
                else { break }
                manager = .user(uid: uid)
                expectingUnit = true
            }
            if component.hasSuffix(".slice") { continue }
            guard Self.processUnitSuffixes.contains(where: { component.hasSuffix($0) }),
                (try? Self.validate(unitName: component, allowTemplate: false)) != nil
            else { break }
            unit = SystemdUnit(name: component, manager: manager)
            expectingUnit = false
        }
        guard let unit else { return nil }
        self = unit
    }

    /// The wildcard of a selector: any run of characters, none included (a unit name holds no `/`).
    package static let globCharacter: Character = "*"

    /// The fewest characters a pattern with `*` must fix besides its suffix, so that it names something.
    package static let globLiteralMinimum = 3

    /// True when `pattern`, whose `*` stand for any run of characters, matches all of `name`.
    static func glob(_ pattern: ArraySlice<UInt8>, matches name: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return name.isEmpty }
        if first == UInt8(ascii: "*") {
            let rest = pattern.dropFirst()
            var candidate = name
            while true {
                if glob(rest, matches: candidate) { return true }
                guard !candidate.isEmpty else { return false }
                candidate = candidate.dropFirst()
            }
        }
        guard let head = name.first, head == first else { return false }
        return glob(pattern.dropFirst(), matches: name.dropFirst())
    }

    /// The uid of a user manager unit name `user@UID.service`, or nil.
    static func userManagerUID(_ name: String) -> UInt32? {
        guard name.hasPrefix("user@"), name.hasSuffix(".service") else { return nil }
        return UInt32(name.dropFirst(5).dropLast(8))
    }

    /// systemd escapes cgroup names that could clash with kernel files by prefixing `_`; undo that.
    package static func cgroupUnescaped(_ component: Substring) -> String {
        component.hasPrefix("_") ? String(component.dropFirst()) : String(component)
    }

    // MARK: - Unit name rules

    /// Checks a unit name as systemd does for service and scope units: 1–255 characters of ASCII letters,
    /// digits and `:_.\-`, with at most one `@` (a template `name@.service`, when `allowTemplate`, or an
    /// instance `name@x.service`), ending in `.service` or `.scope`.
    /// With `allowGlob`, `*` may stand for any run of characters (a selector such as `app-*-tictactoe-*.scope`),
    /// provided the pattern fixes at least ``globLiteralMinimum`` characters besides its suffix.
    package static func validate(unitName name: String, allowTemplate: Bool, allowGlob: Bool = false)
        throws(UnitNameError)
    {
        if name.isEmpty { throw .empty }
        if name.utf8.count > maxNameLength { throw .tooLong(name.utf8.count) }
        if let bad = name.unicodeScalars.first(where: {
            !isUnitNameCharacter($0) && !(allowGlob && $0 == "*")
        }) {
            throw .invalidCharacter(String(bad))
        }
        if name.contains(globCharacter) {
            let suffix = processUnitSuffixes.first { name.hasSuffix($0) } ?? ""
            let literal = name.dropLast(suffix.count).filter { $0 != globCharacter }
            if literal.count < globLiteralMinimum { throw .globTooWide }
            if name.contains("@") { throw .globTemplate }
        }
        guard let suffix = processUnitSuffixes.first(where: { name.hasSuffix($0) }) else {
            if let dot = name.lastIndex(of: "."), !name[dot...].dropFirst().isEmpty {
                throw .notAProcessUnit(String(name[name.index(after: dot)...]))
            }
            throw .missingSuffix
        }
        let stem = name.dropLast(suffix.count)
        if stem.isEmpty { throw .empty }
        let ats = stem.filter { $0 == "@" }.count
        if ats > 1 { throw .tooManyAts }
        if ats == 1 {
            if stem.hasPrefix("@") { throw .emptyTemplatePrefix }
            if stem.hasSuffix("@") {
                if !allowTemplate { throw .templateNotAllowed }
                if suffix == ".scope" { throw .scopeTemplate }
            }
        }
    }

    private static func isUnitNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ":", "_", ".", "\\", "-", "@": return true
        default: return false
        }
    }
}

/// Why a text is not a usable systemd unit name; the description says what to write instead.
package enum UnitNameError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(Int)
    case invalidCharacter(String)
    case missingSuffix
    case notAProcessUnit(String)
    case tooManyAts
    case emptyTemplatePrefix
    case templateNotAllowed
    case scopeTemplate
    case globTooWide
    case globTemplate

    package var description: String {
        switch self {
        case .empty: return "the unit name is empty: write a unit such as 'tictactoe.service'"
        case .tooLong(let count):
            return "the unit name has \(count) characters; systemd allows at most \(SystemdUnit.maxNameLength)"
        case .invalidCharacter(let character):
            return "\(ManifestDocument.quoted(character)) cannot appear in a unit name (letters, digits and "
                + ":_.\\-@ only; systemd-escape makes any text into a valid name)"
        case .missingSuffix:
            return "the unit name needs a type suffix: '.service' or '.scope'"
        case .notAProcessUnit(let type):
            return "a .\(type) unit runs no processes, so it cannot identify an app: name the .service or .scope unit"
        case .tooManyAts: return "a unit name has at most one '@' (as in 'game@.service')"
        case .emptyTemplatePrefix: return "a template needs a name before the '@' (as in 'game@.service')"
        case .templateNotAllowed: return "a template name (ending in '@') cannot be the unit of a process"
        case .scopeTemplate: return "scopes cannot be templates: name the scope, or use a service template"
        case .globTooWide:
            return "a pattern with '*' must fix at least \(SystemdUnit.globLiteralMinimum) characters besides its "
                + "suffix (as in 'app-*-tictactoe-*.scope')"
        case .globTemplate: return "a pattern with '*' cannot also be a template or an instance ('@')"
        }
    }
}
