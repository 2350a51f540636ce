import Foundation
import HeraldConfig
import HeraldWire
import Testing

@Suite("Avahi .service files")
struct AvahiServiceFileTests {
    static func parse(_ text: String, host: String = "myhost") throws(ServiceFileError) -> AvahiServiceFile {
        try AvahiServiceFile(contents: text, file: "test.service", hostName: host)
    }

    static func problems(_ text: String) -> [ServiceFileProblem] {
        do {
            _ = try parse(text)
            return []
        } catch {
            return error.problems
        }
    }

    @Test("a full group with two services, wildcards, subtypes, domain, host and text TXT")
    func fullGroup() throws {
        let file = try Self.parse(
            """
            <?xml version="1.0" standalone='no'?>
            <!DOCTYPE service-group SYSTEM "avahi-service.dtd">
            <service-group>
              <name replace-wildcards="yes">%h printer</name>
              <service protocol="ipv4">
                <type>_ipp._tcp</type>
                <subtype>_universal._sub._ipp._tcp</subtype>
                <subtype>_color</subtype>
                <host-name>printer.local</host-name>
                <port>631</port>
                <txt-record>rp=printers/main</txt-record>
                <txt-record>Color=T</txt-record>
                <txt-record>note=a b  c</txt-record>
                <txt-record>flag</txt-record>
              </service>
              <service protocol="ipv6">
                <type>_http._tcp</type>
                <domain-name>example.com</domain-name>
                <port>80</port>
              </service>
            </service-group>
            """)
        #expect(file.warnings.isEmpty)
        #expect(file.services.count == 2)
        let ipp = file.services[0]
        #expect(ipp.name == "myhost printer")
        let expected1 = try ServiceType("_ipp._tcp")
        #expect(ipp.type == expected1)
        #expect(ipp.subtypes == ["_universal", "_color"])
        let expected2 = DNSName("printer.local")
        #expect(ipp.host == expected2)
        #expect(ipp.port == 631)
        #expect(ipp.protocol == .ipv4)
        #expect(ipp.txt["rp"] == .some(Array("printers/main".utf8)))
        #expect(ipp.txt["note"] == .some(Array("a b  c".utf8)))
        #expect(ipp.txt["flag"] == .some(nil))
        let http = file.services[1]
        #expect(http.name == "myhost printer")
        let expected3 = DNSName("example.com")
        #expect(http.domain == expected3)
        #expect(http.protocol == .ipv6)
        #expect(http.host == nil)
    }

    @Test("%h is kept literally without replace-wildcards")
    func noWildcards() throws {
        let plain = try Self.parse(
            """
            <service-group><name>%h box</name><service><type>_ssh._tcp</type><port>22</port></service></service-group>
            """)
        #expect(plain.services[0].name == "%h box")
        let no = try Self.parse(
            """
            <service-group><name replace-wildcards="no">%h box</name><service><type>_ssh._tcp</type><port>22</port></service></service-group>
            """)
        #expect(no.services[0].name == "%h box")
    }

    @Test("binary TXT values in hex and base64")
    func binaryTXT() throws {
        let file = try Self.parse(
            """
            <service-group><name>x</name><service><type>_x._tcp</type><port>1</port>
              <txt-record value-format="binary-hex">h=00ff10</txt-record>
              <txt-record value-format="binary-base64">b=AAEC/w==</txt-record>
              <txt-record value-format="text">t=plain</txt-record>
            </service></service-group>
            """)
        let txt = file.services[0].txt
        #expect(txt["h"] == .some([0x00, 0xFF, 0x10]))
        #expect(txt["b"] == .some([0x00, 0x01, 0x02, 0xFF]))
        #expect(txt["t"] == .some(Array("plain".utf8)))
    }

    @Test("bad hex and base64 are reported at their element")
    func badBinary() {
        let problems = Self.problems(
            """
            <service-group><name>x</name><service><type>_x._tcp</type><port>1</port>
              <txt-record value-format="binary-hex">h=0g</txt-record>
              <txt-record value-format="binary-base64">b=!!!</txt-record>
              <txt-record value-format="rot13">r=x</txt-record>
            </service></service-group>
            """)
        #expect(problems.count == 3)
        #expect(
            problems.map(\.element) == [
                "/service-group/service/txt-record", "/service-group/service/txt-record[2]",
                "/service-group/service/txt-record[3]",
            ])
        #expect(problems.map(\.line) == [2, 3, 4])
        #expect(problems.allSatisfy { $0.severity == .error && $0.file == "test.service" })
        #expect(
            problems[0].description
                == "test.service:2 /service-group/service/txt-record: error: the value of \"h\" is not valid hexadecimal"
        )
    }

    @Test("a missing port, a bad type, a bad port and a missing name are all reported")
    func everyProblemListed() {
        let problems = Self.problems(
            """
            <service-group>
              <service><type>_x._tcp</type></service>
              <service><type>not a type</type><port>22</port></service>
              <service><type>_y._tcp</type><port>70000</port></service>
            </service-group>
            """)
        #expect(problems.contains { $0.element == "/service-group" && $0.message.contains("<name> is missing") })
        #expect(
            problems.contains { $0.element == "/service-group/service" && $0.message.contains("<port> is missing") })
        #expect(
            problems.contains {
                $0.element == "/service-group/service[2]/type" && $0.message.contains("bad service type")
            })
        #expect(problems.contains { $0.element == "/service-group/service[3]/port" && $0.line == 4 })
        #expect(problems.count == 4)
    }

    @Test("a valid service does not save a group with a broken one (Avahi groups are all or nothing)")
    func groupAllOrNothing() {
        let problems = Self.problems(
            """
            <service-group><name>x</name>
              <service><type>_ok._tcp</type><port>1</port></service>
              <service><type>_bad</type><port>1</port></service>
            </service-group>
            """)
        #expect(problems.count == 1)
        #expect(problems.first?.element == "/service-group/service[2]/type")
    }

    @Test("malformed XML is an error with a line")
    func badXML() {
        let problems = Self.problems(
            """
            <service-group>
              <name>x</name>
              <service><type>_x._tcp</type><port>1</port>
            </service-group>
            """)
        #expect(problems.count == 1)
        #expect(problems.first?.message.hasPrefix("not well-formed XML") == true)
        #expect(problems.first?.line != nil)
        #expect(Self.problems("").count == 1)
        #expect(Self.problems("<other/>").first?.message.contains("expected <service-group>") == true)
    }

    @Test("entity declarations are refused and external entities are never loaded")
    func entitiesRefused() {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("herald-xxe-\(UUID().uuidString)")
        try? "SECRET".write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        let problems = Self.problems(
            """
            <?xml version="1.0"?>
            <!DOCTYPE service-group [ <!ENTITY xxe SYSTEM "file://\(secret.path)"> ]>
            <service-group><name>&xxe;</name><service><type>_x._tcp</type><port>1</port></service></service-group>
            """)
        #expect(!problems.isEmpty)
        #expect(!problems.contains { $0.message.contains("SECRET") })
        let laughs = Self.problems(
            """
            <?xml version="1.0"?>
            <!DOCTYPE service-group [ <!ENTITY a "aaaaaaaaaa"> <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"> ]>
            <service-group><name>&b;</name><service><type>_x._tcp</type><port>1</port></service></service-group>
            """)
        #expect(!laughs.isEmpty)
    }

    @Test("unknown elements and attributes are warnings; the service is still used")
    func unknownReported() throws {
        let file = try Self.parse(
            """
            <service-group><name colour="red">x</name>
              <service><type>_x._tcp</type><port>1</port><priority>3</priority></service>
            </service-group>
            """)
        #expect(file.services.count == 1)
        #expect(file.warnings.count == 2)
        #expect(file.warnings.allSatisfy { $0.severity == .warning })
        #expect(file.warnings.contains { $0.element == "/service-group/name" && $0.message.contains("colour") })
        #expect(file.warnings.contains { $0.element == "/service-group/service/priority" })
    }

    @Test("a type with a subtype, a bad subtype and duplicate TXT keys are errors")
    func moreErrors() {
        let problems = Self.problems(
            """
            <service-group><name>x</name>
              <service><type>_p._sub._x._tcp</type><port>1</port></service>
              <service><type>_x._tcp</type><subtype>_a._sub._other._tcp</subtype><port>1</port>
                <txt-record>k=1</txt-record><txt-record>K=2</txt-record></service>
            </service-group>
            """)
        #expect(problems.contains { $0.element == "/service-group/service/type" })
        #expect(problems.contains { $0.element == "/service-group/service[2]/subtype" })
        #expect(
            problems.contains { $0.element == "/service-group/service[2]/txt-record[2]" && $0.message.contains("TXT") })
    }
}

@Suite("systemd .dnssd files")
struct SystemdDNSSDFileTests {
    static let specifiers = SystemdDNSSDFile.Specifiers(
        hostName: "myhost", machineID: "0123abcd", bootID: "b00t",
        kernelRelease: "6.1.0", architecture: "x86-64")

    static func parse(_ text: String) throws(ServiceFileError) -> SystemdDNSSDFile {
        try SystemdDNSSDFile(contents: text, file: "test.dnssd", specifiers: specifiers)
    }

    static func problems(_ text: String) -> [ServiceFileProblem] {
        do {
            _ = try parse(text)
            return []
        } catch {
            return error.problems
        }
    }

    @Test("a full file with specifiers, subtypes, priority and weight")
    func fullFile() throws {
        let file = try Self.parse(
            """
            # comment
            ; another
            [Service]
            Name=%H on %a (%m/%b/%v) 100%%
            Type=_http._tcp
            SubType=_printer
            SubType=_universal._sub._http._tcp
            Port=8080
            Priority=10
            Weight=20
            TxtText=path=/ "title=Front page" flag
            """)
        #expect(file.warnings.isEmpty)
        let s = file.service
        #expect(s.name == "myhost on x86-64 (0123abcd/b00t/6.1.0) 100%")
        let expected5 = try ServiceType("_http._tcp")
        #expect(s.type == expected5)
        #expect(s.subtypes == ["_printer", "_universal"])
        #expect(s.port == 8080)
        #expect(s.priority == 10)
        #expect(s.weight == 20)
        #expect(s.txtRecords.count == 1)
        #expect(s.txt["path"] == .some(Array("/".utf8)))
        #expect(s.txt["title"] == .some(Array("Front page".utf8)))
        #expect(s.txt["flag"] == .some(nil))
    }

    @Test(
        "the os-release specifiers (%o %w %W %B %M %A) and the short host name (%l) expand as systemd's do; a field os-release lacks expands to nothing"
    )
    func osReleaseSpecifiers() throws {
        let osRelease = SystemdDNSSDFile.Specifiers.parseOSRelease(
            """
            # a comment
            PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
            ID=debian
            VERSION_ID="13"
            VARIANT_ID='server'
            BUILD_ID="2026.11 \\"nightly\\""
            not a field
            """)
        #expect(osRelease["ID"] == "debian" && osRelease["VERSION_ID"] == "13" && osRelease["VARIANT_ID"] == "server")
        #expect(
            osRelease["BUILD_ID"] == "2026.11 \"nightly\"" && osRelease["PRETTY_NAME"] == "Debian GNU/Linux 13 (trixie)"
        )
        let specifiers = SystemdDNSSDFile.Specifiers(hostName: "box.example", osRelease: osRelease)
        let file = try SystemdDNSSDFile(
            contents: "[Service]\nName=%l %o %w %W [%M%A]\nType=_http._tcp\nPort=80\n",
            file: "os.dnssd", specifiers: specifiers)
        #expect(file.service.name == "box debian 13 server []")
        let unknown = Self.problems("[Service]\nName=%Q\nType=_http._tcp\nPort=80\n")
        #expect(unknown.first?.message.contains("unknown specifier %Q") == true, "\(unknown)")
    }

    @Test("repeated TxtText and TxtData make one TXT record each; base64 and escapes decode")
    func repeatedTXT() throws {
        let file = try Self.parse(
            """
            [Service]
            Name=x
            Type=_x._udp
            Port=1
            TxtText=a=1 b=2
            TxtData=blob=AAEC/w==
            TxtText=c=\\x41\\sB
            """)
        let records = file.service.txtRecords
        #expect(records.count == 3)
        #expect(records[0]["a"] == .some(Array("1".utf8)))
        #expect(records[0]["b"] == .some(Array("2".utf8)))
        #expect(records[1]["blob"] == .some([0, 1, 2, 0xFF]))
        #expect(records[2]["c"] == .some(Array("A B".utf8)))
        #expect(file.service.txt == records[0])
    }

    @Test("an empty assignment resets TXT records and subtypes")
    func emptyResets() throws {
        let file = try Self.parse(
            """
            [Service]
            Name=x
            Type=_x._tcp
            Port=1
            SubType=_old
            TxtText=old=1
            TxtData=
            SubType=
            SubType=_new
            TxtText=new=2
            """)
        #expect(file.service.subtypes == ["_new"])
        #expect(file.service.txtRecords.count == 1)
        #expect(file.service.txt["new"] == .some(Array("2".utf8)))
        #expect(file.service.txt["old"] == nil)

        let cleared = try Self.parse("[Service]\nName=x\nType=_x._tcp\nPort=1\nTxtText=a=1\nTxtText=\n")
        #expect(cleared.service.txtRecords == [.empty])
    }

    @Test("a missing port is an error naming the file and a line")
    func missingPort() {
        let problems = Self.problems("[Service]\nName=x\nType=_x._tcp\n")
        #expect(problems.count == 1)
        #expect(problems[0].file == "test.dnssd")
        #expect(problems[0].line != nil)
        #expect(problems[0].message.contains("Port= is missing"))
    }

    @Test("every problem is listed with its line")
    func everyProblem() {
        let problems = Self.problems(
            """
            [Service]
            Name=%Z
            Type=http
            Port=http
            Weight=-1
            TxtData=k=not*base64
            TxtText=bad=1 =empty
            junk line
            """)
        #expect(problems.map(\.line) == [4, 5, 6, 7, 8, 2, 3])
        #expect(problems.allSatisfy { $0.severity == .error })
        #expect(problems.first { $0.line == 2 }?.message.contains("%Z") == true)
        #expect(problems.first { $0.line == 3 }?.message.contains("bad service type") == true)
    }

    @Test("unknown keys and sections are warnings; the service is still used")
    func unknownKeys() throws {
        let file = try Self.parse(
            """
            [Service]
            Name=x
            Type=_x._tcp
            Port=1
            Colour=red
            [Other]
            Key=1
            """)
        #expect(file.warnings.count == 2)
        #expect(file.warnings[0].line == 5)
        #expect(file.warnings[0].message.contains("Colour"))
        #expect(file.warnings[1].line == 6)
        #expect(file.warnings.allSatisfy { $0.severity == .warning })
    }

    @Test("a file without a [Service] section, and keys before any section, are errors")
    func noSection() {
        #expect(Self.problems("Name=x\n").contains { $0.line == 1 && $0.message.contains("before any section") })
        #expect(Self.problems("# nothing\n").contains { $0.message.contains("no [Service]") })
    }

    @Test("a name longer than 63 bytes is refused")
    func longName() {
        let problems = Self.problems("[Service]\nName=\(String(repeating: "n", count: 64))\nType=_x._tcp\nPort=1\n")
        #expect(problems.count == 1)
        #expect(problems[0].line == 2)
    }
}
