import Foundation
import HeraldDaemon
import HeraldEngine
import HeraldWire
import Testing

/// What the responder publishes for a static service (`StaticService+Registration.swift`); the files' rules are
/// tested in HeraldConfigTests.
@Suite("Static services as registrations")
struct StaticServiceRegistrationTests {
    @Test("an Avahi service's name, type, subtypes, host, port, TXT and protocol reach its registration")
    func avahiRegistration() throws {
        let file = try AvahiServiceFile(
            contents: """
                <service-group>
                  <name replace-wildcards="yes">%h printer</name>
                  <service protocol="ipv4">
                    <type>_ipp._tcp</type>
                    <subtype>_universal._sub._ipp._tcp</subtype>
                    <subtype>_color</subtype>
                    <host-name>printer.local</host-name>
                    <port>631</port>
                    <txt-record>rp=printers/main</txt-record>
                  </service>
                  <service protocol="ipv6">
                    <type>_http._tcp</type>
                    <port>80</port>
                  </service>
                </service-group>
                """, file: "test.service", hostName: "myhost")
        let ipp = file.services[0]
        let registration = ipp.registration()
        #expect(registration.family == .ipv4)
        #expect(registration.instance == "myhost printer")
        let expectedType = DNSName("_ipp._tcp.local.")
        #expect(registration.type == expectedType)
        #expect(registration.subtypes == ["_universal", "_color"])
        #expect(registration.port == 631)
        #expect(registration.txt == ipp.txt)
        #expect(registration.host == ipp.host)
        #expect(file.services[1].registration().family == .ipv6)
        let any = try AvahiServiceFile(
            contents:
                "<service-group><name>n</name><service><type>_x._tcp</type><port>1</port></service></service-group>",
            file: "any.service", hostName: "myhost")
        #expect(any.services[0].registration().family == nil)
    }

    @Test("every TXT record of a .dnssd file is published in the instance's TXT record set")
    func repeatedTXT() throws {
        let file = try Self.parse("[Service]\nName=x\nType=_x._udp\nPort=1\nTxtText=a=1\nTxtText=b=2\nTxtText=c=3\n")
        let records = file.service.txtRecords
        #expect(records.count == 3)
        let registration = file.service.registration()
        #expect(registration.txt == records[0])
        #expect(registration.additionalTXT == [records[1], records[2]])
    }

    static func parse(_ text: String) throws(ServiceFileError) -> SystemdDNSSDFile {
        try SystemdDNSSDFile(
            contents: text, file: "test.dnssd", specifiers: SystemdDNSSDFile.Specifiers(hostName: "myhost"))
    }

    @Test("Priority= and Weight= reach the registration's SRV record; without them both are 0")
    func priorityAndWeight() throws {
        let file = try Self.parse("[Service]\nName=x\nType=_x._tcp\nPort=9\nPriority=3\nWeight=700\n")
        let registration = file.service.registration()
        #expect(registration.priority == 3)
        #expect(registration.weight == 700)
        let plain = try Self.parse("[Service]\nName=x\nType=_x._tcp\nPort=9\n").service.registration()
        #expect(plain.priority == 0 && plain.weight == 0 && plain.additionalTXT.isEmpty)
    }
}

@Suite("services.d directories")
struct ServiceDirectoryTests {
    static let shipped: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("services.d").path

    static let specifiers = SystemdDNSSDFile.Specifiers(hostName: "myhost")

    @Test("the shipped examples all parse without problems")
    func shippedExamples() throws {
        let contents = ServiceDirectory.load(path: Self.shipped, hostName: "myhost", specifiers: Self.specifiers)
        #expect(contents.problems.isEmpty, "\(contents.problems)")
        let byType = Dictionary(uniqueKeysWithValues: contents.services.map { ($0.type.description, $0) })
        #expect(byType.count == 4)
        #expect(byType["_ssh._tcp"]?.port == 22)
        #expect(byType["_ssh._tcp"]?.name == "myhost")
        #expect(byType["_sftp-ssh._tcp"]?.port == 22)
        #expect(byType["_http._tcp"]?.port == 80)
        #expect(byType["_http._tcp"]?.txt["path"] == .some(Array("/".utf8)))
        #expect(byType["_device-info._tcp"]?.port == 0)
        #expect(byType["_device-info._tcp"]?.txt["model"] == .some(Array("Xserve".utf8)))
        #expect(contents.registrations().count == 4)
        // The default loader (reading specifiers from the system) works too.
        #expect(ServiceDirectory.load(path: Self.shipped, hostName: "myhost").services.count == 4)
    }

    @Test("a broken file is reported by name and line or element; the other files' services are kept")
    func brokenFileKeepsOthers() throws {
        let dir = URL(fileURLWithPath: try makeTemporaryDirectory("herald-services"))
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try write(
            "a-good.service",
            """
            <service-group><name replace-wildcards="yes">%h</name>
            <service><type>_ssh._tcp</type><port>22</port></service></service-group>
            """)
        try write("b-broken.dnssd", "[Service]\nName=x\nType=_x._tcp\nPort=99999\n")
        try write(
            "c-broken.service", "<service-group><name>x</name>\n<service><type>_y._tcp</type></service></service-group>"
        )
        try write("d-good.dnssd", "[Service]\nName=%H web\nType=_http._tcp\nPort=80\n")
        try write("ignored.txt", "not a service file")
        try write(".hidden.service", "<broken")

        let contents = ServiceDirectory.load(path: dir.path, hostName: "myhost", specifiers: Self.specifiers)
        #expect(contents.services.map(\.name) == ["myhost", "myhost web"])
        #expect(contents.services.map(\.port) == [22, 80])
        #expect(contents.problems.count == 2)
        let dnssd = contents.problems.first { $0.file.hasSuffix("b-broken.dnssd") }
        #expect(dnssd?.line == 4)
        #expect(dnssd?.message.contains("Port") == true)
        let avahi = contents.problems.first { $0.file.hasSuffix("c-broken.service") }
        #expect(avahi?.element == "/service-group/service")
        #expect(avahi?.message.contains("<port> is missing") == true)
        #expect(contents.errors.count == 2)
        #expect(contents.problems.allSatisfy { $0.description.contains($0.file) })
    }

    @Test(
        "a .dnssd file's drop-ins (NAME.dnssd.d/*.conf, in name order) change it as later lines would; a problem in one names the drop-in"
    )
    func dropIns() throws {
        let dir = URL(fileURLWithPath: try makeTemporaryDirectory("herald-dropins"))
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try write("web.dnssd", "[Service]\nName=%H web\nType=_http._tcp\nPort=80\nTxtText=path=/\n")
        try write("web.dnssd.d/20-port.conf", "[Service]\nPort=8080\n")
        try write("web.dnssd.d/10-name.conf", "[Service]\nName=Front %l\nPort=81\nTxtText=\nTxtText=path=/front\n")
        try write("web.dnssd.d/notes.txt", "[Service]\nPort=1\n")
        try write("bad.dnssd", "[Service]\nName=x\nType=_x._tcp\nPort=90\n")
        try write("bad.dnssd.d/override.conf", "[Service]\n\nPort=huge\n")

        let contents = ServiceDirectory.load(path: dir.path, hostName: "myhost", specifiers: Self.specifiers)
        #expect(contents.services.map(\.name) == ["Front myhost"])
        #expect(contents.services.first?.port == 8080)
        #expect(contents.services.first?.txt["path"] == .some(Array("/front".utf8)))
        let problem = try #require(contents.problems.first, "\(contents.problems)")
        #expect(
            contents.problems.count == 1 && problem.file.hasSuffix("bad.dnssd.d/override.conf") && problem.line == 3,
            "\(contents.problems)")
    }

    @Test("a missing directory means no static services; a file where the directory should be is a problem")
    func missingDirectory() throws {
        let missing = ServiceDirectory.load(
            path: "/nonexistent/herald/services.d", hostName: "h", specifiers: Self.specifiers)
        #expect(missing.services.isEmpty)
        #expect(missing.problems.isEmpty)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-not-a-directory-\(getpid())")
            .path
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let notDirectory = ServiceDirectory.load(path: file, hostName: "h", specifiers: Self.specifiers)
        #expect(notDirectory.services.isEmpty)
        #expect(notDirectory.problems.count == 1)
    }
}
