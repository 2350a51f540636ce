import HeraldWire

/// Every setting of heraldd, with its default; read from the configuration file, then overridden by
/// command-line options. Each setting is documented in `docs/heraldd.conf`.
package struct DaemonConfiguration: Sendable, Hashable {
    // [network]
    package var hostName: String?
    package var interfaces: [String] = []
    package var denyInterfaces: [String] = []
    package var useIPv4 = true
    package var useIPv6 = true
    package var publishAddresses = true
    /// Ask for unicast replies in the first query of a question with nothing cached (QU, RFC 6762 §5.4).
    package var unicastFirstQueries = true
    package var maxMessageSize = MessageSizeLimit.maximumDatagram
    // [limits]
    package var cacheEntriesPerInterface = 16_384
    package var clients = 1024
    package var clientsPerUser = 128
    package var operationsPerClient = 1024
    package var operationsPerUser = 4096
    package var clientReplyBuffer = 1 << 20
    package var idleClientSeconds = 60
    package var packetsPerSecondPerSource = 1000
    package var packetBurstPerSource = 1000
    // [permissions]
    /// Members of this group are operators (as is uid 0).
    package var operatorGroup = "herald"
    /// When true, address lookups (A/AAAA of `name.local`, reverse lookups) are allowed for every local user.
    package var addressLookupsOpenToAllUsers = false
    package var auditLogLines = 10_000
    /// Operator actions kept in the audit log, apart from the lines of requests.
    package var operatorLogLines = 10_000
    /// Of one user's decisions with one reason, this many a minute are written one by one; the rest are folded.
    package var auditLinesPerUser = 100
    package var pendingRequestLimit = 1_000
    package var pendingRequestsPerApp = 50
    /// Kernel enforcement of local-network access (docs/enforcement.md): `off`, `registered` or `all`.
    package var enforcement = "off"
    /// When true, a clean stop leaves every app held back instead of removing the rules.
    package var enforcementFailClosed = false
    /// System units that keep the local network when `enforcement` is `all`.
    package var enforcementExemptUnits: [String] = []
    // [paths]
    package var appSocket = DaemonPaths.system.appSocket
    package var controlSocket = DaemonPaths.system.controlSocket
    package var stateDirectory = DaemonPaths.system.stateDirectory
    package var appsDirectory = DaemonPaths.system.appsDirectory
    /// The directories of static service files, read in this order (an administrator's own and, on a system where
    /// Herald takes Avahi's place, `/etc/avahi/services`).
    package var servicesDirectories = [DaemonPaths.system.servicesDirectory]
    /// Where to serve libnss-mdns's protocol; nil: not served.
    package var nssSocket: String?
    /// Another path the app protocol is served on, for programs built against Apple's libdns_sd, which look for
    /// mDNSResponder at `/var/run/mDNSResponder`; nil: only the app socket.
    package var mdnsResponderSocket: String?
    // [dbus]
    /// Whether Avahi's D-Bus API is served on the system bus (docs/dbus-api.md).
    package var dbus = DBusSetting.auto

    /// `[dbus] enabled`: serve Avahi's D-Bus API whenever a system bus is reachable (`auto`), insist on it (`yes`:
    /// heraldd does not start without it), or never (`no`).
    package enum DBusSetting: String, Sendable, Hashable {
        case auto, yes, no
    }

    package init() {}

    /// Applies a parsed file; every unknown key and bad value is reported, with its line.
    package mutating func apply(_ file: ConfigurationFile) throws(ConfigurationFile.ProblemList) {
        var problems: [ConfigurationFile.Problem] = []
        for entry in file.entries {
            do throws(ConfigurationFile.Problem) {
                try apply(entry)
            } catch {
                problems.append(error)
            }
        }
        if !problems.isEmpty { throw ConfigurationFile.ProblemList(problems: problems) }
    }

    private mutating func apply(_ entry: ConfigurationFile.Entry) throws(ConfigurationFile.Problem) {
        let name = "[\(entry.section)] \(entry.key)"
        func problem(_ text: String) -> ConfigurationFile.Problem {
            ConfigurationFile.Problem(line: entry.line, message: "\(name) = '\(entry.value)': \(text)")
        }
        func bool() throws(ConfigurationFile.Problem) -> Bool {
            switch entry.value.lowercased() {
            case "yes", "true", "on", "1": return true
            case "no", "false", "off", "0": return false
            default: throw problem("must be yes or no")
            }
        }
        func number(_ range: ClosedRange<Int>) throws(ConfigurationFile.Problem) -> Int {
            guard let value = Int(entry.value), range.contains(value) else {
                throw problem("must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        func list() -> [String] {
            entry.value.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        }
        func path() throws(ConfigurationFile.Problem) -> String {
            guard entry.value.hasPrefix("/") else { throw problem("must be an absolute path") }
            return entry.value
        }
        func socketPath() throws(ConfigurationFile.Problem) -> String {
            let value = try path()
            guard value.utf8.count < 108 else { throw problem("must be shorter than 108 bytes (a Unix socket path)") }
            return value
        }
        if entry.value.isEmpty { return }  // blank: keep the default
        switch (entry.section, entry.key) {
        case ("network", "host-name"):
            if let rule = Self.hostNameProblem(entry.value) { throw problem(rule) }
            hostName = entry.value
        case ("network", "interfaces"): interfaces = list()
        case ("network", "deny-interfaces"): denyInterfaces = list()
        case ("network", "use-ipv4"): useIPv4 = try bool()
        case ("network", "use-ipv6"): useIPv6 = try bool()
        case ("network", "publish-addresses"): publishAddresses = try bool()
        case ("network", "unicast-first-queries"): unicastFirstQueries = try bool()
        case ("network", "max-message-size"):
            maxMessageSize = try number(MessageSizeLimit.minimumDatagram...MessageSizeLimit.maximumDatagram)
        case ("limits", "cache-entries-per-interface"): cacheEntriesPerInterface = try number(64...1_000_000)
        case ("limits", "clients"): clients = try number(1...65_536)
        case ("limits", "clients-per-user"): clientsPerUser = try number(1...65_536)
        case ("limits", "operations-per-client"): operationsPerClient = try number(1...65_536)
        case ("limits", "operations-per-user"): operationsPerUser = try number(1...1_000_000)
        case ("limits", "idle-client-timeout"): idleClientSeconds = try number(5...86_400)
        case ("limits", "client-reply-buffer"): clientReplyBuffer = try number(65_536...(64 << 20))
        case ("limits", "packets-per-second-per-source"): packetsPerSecondPerSource = try number(1...1_000_000)
        case ("limits", "packet-burst-per-source"): packetBurstPerSource = try number(1...1_000_000)
        case ("permissions", "operator-group"):
            guard Self.isGroupName(entry.value) else {
                throw problem("must be a group name (lower-case letters, digits, '_' and '-', at most 32)")
            }
            operatorGroup = entry.value
        case ("permissions", "address-lookups"):
            switch entry.value.lowercased() {
            case "apps": addressLookupsOpenToAllUsers = false
            case "everyone": addressLookupsOpenToAllUsers = true
            default: throw problem("must be 'apps' (the permission rules apply) or 'everyone'")
            }
        case ("permissions", "audit-log-lines"): auditLogLines = try number(100...10_000_000)
        case ("permissions", "pending-requests"): pendingRequestLimit = try number(10...1_000_000)
        case ("permissions", "operator-log-lines"): operatorLogLines = try number(100...10_000_000)
        case ("permissions", "audit-lines-per-user"): auditLinesPerUser = try number(0...1_000_000)
        case ("permissions", "pending-requests-per-app"): pendingRequestsPerApp = try number(1...100_000)
        case ("permissions", "enforcement"):
            guard Self.enforcementModes.contains(entry.value.lowercased()) else {
                throw problem("must be off, registered or all")
            }
            enforcement = entry.value.lowercased()
        case ("permissions", "fail-closed"): enforcementFailClosed = try bool()
        case ("permissions", "exempt-units"):
            let units = list()
            if let bad = units.first(where: { !($0.hasSuffix(".service") || $0.hasSuffix(".scope")) }) {
                throw problem("'\(bad)' is not a .service or .scope unit")
            }
            enforcementExemptUnits = units
        case ("paths", "app-socket"): appSocket = try path()
        case ("paths", "control-socket"): controlSocket = try path()
        case ("paths", "state-dir"): stateDirectory = try path()
        case ("paths", "apps-dir"): appsDirectory = try path()
        case ("paths", "services-dir"):
            let paths = list()
            guard !paths.isEmpty, paths.allSatisfy({ $0.hasPrefix("/") }) else {
                throw problem("must be absolute paths, separated by commas")
            }
            servicesDirectories = paths
        case ("paths", "nss-socket"): nssSocket = try socketPath()
        case ("paths", "mdnsresponder-socket"): mdnsResponderSocket = try socketPath()
        case ("dbus", "enabled"):
            switch entry.value.lowercased() {
            case "auto": dbus = .auto
            case "yes", "true", "on", "1": dbus = .yes
            case "no", "false", "off", "0": dbus = .no
            default: throw problem("must be auto, yes or no")
            }
        default:
            throw ConfigurationFile.Problem(
                line: entry.line,
                message: "unknown setting \(name); the settings are listed in docs/heraldd.conf")
        }
        if !useIPv4 && !useIPv6 { throw problem("use-ipv4 and use-ipv6 cannot both be no") }
    }

    /// The settings as a configuration file would write them.
    package var rendered: String {
        func yes(_ value: Bool) -> String { value ? "yes" : "no" }
        return """
            [network]
            host-name = \(hostName ?? "")
            interfaces = \(interfaces.joined(separator: ", "))
            deny-interfaces = \(denyInterfaces.joined(separator: ", "))
            use-ipv4 = \(yes(useIPv4))
            use-ipv6 = \(yes(useIPv6))
            publish-addresses = \(yes(publishAddresses))
            unicast-first-queries = \(yes(unicastFirstQueries))
            max-message-size = \(maxMessageSize)

            [limits]
            cache-entries-per-interface = \(cacheEntriesPerInterface)
            clients = \(clients)
            clients-per-user = \(clientsPerUser)
            operations-per-client = \(operationsPerClient)
            operations-per-user = \(operationsPerUser)
            client-reply-buffer = \(clientReplyBuffer)
            idle-client-timeout = \(idleClientSeconds)
            packets-per-second-per-source = \(packetsPerSecondPerSource)
            packet-burst-per-source = \(packetBurstPerSource)

            [permissions]
            operator-group = \(operatorGroup)
            address-lookups = \(addressLookupsOpenToAllUsers ? "everyone" : "apps")
            audit-log-lines = \(auditLogLines)
            operator-log-lines = \(operatorLogLines)
            audit-lines-per-user = \(auditLinesPerUser)
            pending-requests = \(pendingRequestLimit)
            pending-requests-per-app = \(pendingRequestsPerApp)
            enforcement = \(enforcement)
            fail-closed = \(yes(enforcementFailClosed))
            exempt-units = \(enforcementExemptUnits.joined(separator: ", "))

            [paths]
            app-socket = \(appSocket)
            control-socket = \(controlSocket)
            state-dir = \(stateDirectory)
            apps-dir = \(appsDirectory)
            services-dir = \(servicesDirectories.joined(separator: ", "))
            nss-socket = \(nssSocket ?? "")
            mdnsresponder-socket = \(mdnsResponderSocket ?? "")
            [dbus]
            enabled = \(dbus.rawValue)

            """
    }
}

extension DaemonConfiguration {
    /// The values of `[permissions] enforcement`.
    package static let enforcementModes = ["off", "registered", "all"]

    /// Why `name` cannot be the host's name label (published as `name.local.`), or nil when it can.
    package static func hostNameProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 63, !name.contains(".") else {
            return "must be a single label of at most 63 bytes, without '.local'"
        }
        return nil
    }

    /// True for a group name as `operator-group` takes it: a lower-case letter or `_`, then up to 31 lower-case
    /// letters, digits, `_` or `-` (the names useradd(8) accepts).
    static func isGroupName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 32, first == UInt8(ascii: "_") || (0x61...0x7A).contains(first)
        else { return false }
        return bytes.dropFirst().allSatisfy {
            (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_")
                || $0 == UInt8(ascii: "-")
        }
    }
}
