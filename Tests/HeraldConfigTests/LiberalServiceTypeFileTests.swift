import HeraldConfig
import HeraldWire
import Testing

/// Service files name types the way Avahi and systemd-resolved accept them: a type longer than RFC 6335's 15
/// characters (barrier's `_barrierServerZeroconf._tcp`) is published, with a warning that names the rule.
@Suite("Service files accept what Avahi and mDNSResponder accept")
struct LiberalServiceTypeFileTests {
    @Test("an Avahi .service file with a 21-character type is read, with a warning at <type>")
    func avahiLongType() throws {
        let file = try AvahiServiceFile(
            contents: """
                <service-group>
                  <name>Barrier on %h</name>
                  <service><type>_barrierServerZeroconf._tcp</type><port>24800</port></service>
                </service-group>
                """, file: "barrier.service", hostName: "desk")
        #expect(file.services.map(\.type) == [try ServiceType("_barrierServerZeroconf._tcp")])
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.severity == .warning)
        #expect(file.warnings.first?.element == "/service-group/service/type")
        #expect(file.warnings.first?.message.contains("21 characters") == true, "\(file.warnings)")
    }

    @Test("a systemd .dnssd file with doubled hyphens and an underscore in its type is read, with warnings")
    func systemdUnregistrableType() throws {
        let file = try SystemdDNSSDFile(
            contents: "[Service]\nName=x\nType=_my--legacy_app._udp\nPort=9\n", file: "x.dnssd",
            specifiers: SystemdDNSSDFileTests.specifiers)
        #expect(file.service.type == (try ServiceType("_my--legacy_app._udp")))
        #expect(file.warnings.map(\.line) == [3, 3])
        #expect(file.warnings.allSatisfy { $0.severity == .warning && $0.message.contains("RFC 6335 §5.1") })
    }

    @Test("a type that is no DNS-SD label is still an error")
    func stillRefused() {
        #expect(throws: ServiceFileError.self) {
            try AvahiServiceFile(
                contents: """
                    <service-group><name>x</name>
                      <service><type>_bad type._tcp</type><port>1</port></service>
                    </service-group>
                    """, file: "bad.service", hostName: "desk")
        }
    }
}
