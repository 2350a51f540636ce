import Foundation
import HeraldConfig
import Testing

@Suite("The configuration file")
struct ConfigurationTests {
    /// The commented default file shipped in docs/.
    static let shippedDefault: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/heraldd.conf")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test("the shipped default file parses and gives exactly the built-in defaults")
    func shippedDefaultMatchesBuiltIn() throws {
        #expect(!Self.shippedDefault.isEmpty)
        var configuration = DaemonConfiguration()
        try configuration.apply(try ConfigurationFile(parsing: Self.shippedDefault))
        #expect(configuration == DaemonConfiguration())
    }

    @Test("the shipped file documents every setting the daemon accepts")
    func everySettingIsDocumented() throws {
        let documented = try ConfigurationFile(parsing: Self.shippedDefault).entries.map { "[\($0.section)] \($0.key)" }
        let rendered = try ConfigurationFile(parsing: DaemonConfiguration().rendered).entries.map {
            "[\($0.section)] \($0.key)"
        }
        #expect(Set(documented) == Set(rendered))
        #expect(documented.count == rendered.count)
    }

    @Test("values are applied and rendered back")
    func valuesApply() throws {
        let text = """
            [network]
            host-name = kitchen   # trailing comment
            interfaces = eth0, wlan0
            use-ipv6 = no
            unicast-first-queries = no
            [limits]
            clients = 12
            [paths]
            nss-socket = /run/avahi-daemon/socket
            mdnsresponder-socket = /run/mDNSResponder
            services-dir = /etc/herald/services.d, /etc/avahi/services
            [dbus]
            enabled = no
            """
        var configuration = DaemonConfiguration()
        #expect(configuration.servicesDirectories == ["/etc/herald/services.d"])
        #expect(configuration.dbus == .auto, "Avahi's D-Bus API is served whenever a system bus is reachable")
        #expect(configuration.nssSocket == nil, "the NSS socket is off unless configured")
        #expect(configuration.mdnsResponderSocket == nil, "mDNSResponder's path is not served unless configured")
        try configuration.apply(try ConfigurationFile(parsing: text))
        #expect(configuration.nssSocket == "/run/avahi-daemon/socket")
        #expect(configuration.mdnsResponderSocket == "/run/mDNSResponder")
        #expect(configuration.dbus == .no)
        #expect(configuration.hostName == "kitchen")
        #expect(configuration.interfaces == ["eth0", "wlan0"])
        #expect(configuration.useIPv6 == false)
        #expect(configuration.unicastFirstQueries == false)
        #expect(configuration.clients == 12)
        #expect(configuration.servicesDirectories == ["/etc/herald/services.d", "/etc/avahi/services"])
        var again = DaemonConfiguration()
        try again.apply(try ConfigurationFile(parsing: configuration.rendered))
        #expect(again == configuration)
    }

    @Test("every problem is reported with its line, the setting and what is allowed")
    func problemsNameLineAndRule() {
        let text = """
            [network]
            use-ipv4 = maybe
            host-name = my.host
            colour = blue
            [limits]
            clients = -3
            [paths]
            app-socket = relative/path
            nss-socket = /\(String(repeating: "s", count: 120))
            not a setting
            """
        var configuration = DaemonConfiguration()
        do {
            let file = try ConfigurationFile(parsing: text)
            Issue.record("a line without '=' must be refused, got \(file.entries.count) entries")
        } catch {
            #expect(error.problems.map(\.line) == [10])
        }
        let valid = text.replacingOccurrences(of: "not a setting\n", with: "").replacingOccurrences(
            of: "not a setting", with: "")
        do {
            try configuration.apply(try ConfigurationFile(parsing: valid))
            Issue.record("bad values must be refused")
        } catch {
            #expect(error.problems.map(\.line) == [2, 3, 4, 6, 8, 9])
            let text = error.description
            #expect(text.contains("line 2: [network] use-ipv4 = 'maybe': must be yes or no"))
            #expect(text.contains("unknown setting [network] colour"))
            #expect(text.contains("must be a whole number from 1 to 65536"))
            #expect(text.contains("must be an absolute path"))
            #expect(text.contains("[paths] nss-socket") && text.contains("shorter than 108 bytes"))
        }
    }

    @Test("turning off both IP families is refused")
    func bothFamiliesOff() {
        var configuration = DaemonConfiguration()
        #expect(throws: ConfigurationFile.ProblemList.self) {
            try configuration.apply(try ConfigurationFile(parsing: "[network]\nuse-ipv4 = no\nuse-ipv6 = no\n"))
        }
    }

    @Test("operator-group takes a group name as useradd(8) does, and nothing else")
    func operatorGroupNames() throws {
        for name in ["herald", "_herald", "net-ops_2", String(repeating: "a", count: 32)] {
            var configuration = DaemonConfiguration()
            try configuration.apply(try ConfigurationFile(parsing: "[permissions]\noperator-group = \(name)\n"))
            #expect(configuration.operatorGroup == name)
        }
        for name in ["Herald", "1ops", "-ops", "ops!", "grüppe", "a b", String(repeating: "a", count: 33)] {
            var configuration = DaemonConfiguration()
            #expect(throws: ConfigurationFile.ProblemList.self, "\(name)") {
                try configuration.apply(try ConfigurationFile(parsing: "[permissions]\noperator-group = \(name)\n"))
            }
        }
    }
}
