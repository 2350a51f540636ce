import HeraldConfig
import Testing

/// The settings of the audit log's retention and folding and of the pending requests' bounds.
@Suite("Audit and pending request settings")
struct AuditSettingsTests {
    @Test("The bounds of the audit log and of pending requests are read, checked and rendered back")
    func settings() throws {
        var configuration = DaemonConfiguration()
        #expect(
            configuration.operatorLogLines == 10_000 && configuration.auditLinesPerUser == 100
                && configuration.pendingRequestsPerApp == 50)
        try configuration.apply(
            try ConfigurationFile(
                parsing: """
                    [permissions]
                    operator-log-lines = 500
                    audit-lines-per-user = 0
                    pending-requests-per-app = 7
                    """))
        #expect(
            configuration.operatorLogLines == 500 && configuration.auditLinesPerUser == 0
                && configuration.pendingRequestsPerApp == 7)
        var again = DaemonConfiguration()
        try again.apply(try ConfigurationFile(parsing: configuration.rendered))
        #expect(again == configuration)
        for bad in ["operator-log-lines = 99", "audit-lines-per-user = -1", "pending-requests-per-app = 0"] {
            var rejected = DaemonConfiguration()
            #expect(throws: ConfigurationFile.ProblemList.self) {
                try rejected.apply(try ConfigurationFile(parsing: "[permissions]\n" + bad))
            }
        }
    }
}

@Suite("The kernel enforcement settings")
struct EnforcementSettingsTests {
    @Test("Enforcement mode, fail-closed and exempt units are read, checked and rendered back")
    func readAndRendered() throws {
        var configuration = DaemonConfiguration()
        #expect(configuration.enforcement == "off")
        try configuration.apply(
            try ConfigurationFile(
                parsing: """
                    [permissions]
                    enforcement = Registered
                    fail-closed = yes
                    exempt-units = ssh.service, systemd-networkd.service
                    """))
        #expect(configuration.enforcement == "registered")
        #expect(configuration.enforcementFailClosed)
        #expect(configuration.enforcementExemptUnits == ["ssh.service", "systemd-networkd.service"])
        var again = DaemonConfiguration()
        try again.apply(try ConfigurationFile(parsing: configuration.rendered))
        #expect(again == configuration)
        for bad in ["enforcement = on", "fail-closed = maybe", "exempt-units = network.target"] {
            var broken = DaemonConfiguration()
            #expect(throws: ConfigurationFile.ProblemList.self) {
                try broken.apply(try ConfigurationFile(parsing: "[permissions]\n\(bad)\n"))
            }
        }
    }
}
