import HeraldConfig
import Testing

/// Inputs found by the fuzz targets in `Fuzz/` (see `Fuzz/README.md`) for the static service files, reduced, with a
/// few hand-made neighbours. Each states what broke.
@Suite("Fuzz regressions (service files)")
struct ServiceFileFuzzRegressionTests {
    static func avahiProblems(_ bytes: [UInt8]) -> [ServiceFileProblem] {
        do {
            _ = try AvahiServiceFile(data: bytes, file: "fuzz.service", hostName: "myhost")
            return []
        } catch {
            return error.problems
        }
    }

    static func dnssdProblems(_ text: String) -> [ServiceFileProblem] {
        do {
            _ = try SystemdDNSSDFile(contents: text, file: "fuzz.dnssd", hostName: "myhost")
            return []
        } catch {
            return error.problems
        }
    }

    /// Trapped in Foundation's XMLParser (the whole daemon, at startup or on SIGHUP): a comment holding bytes
    /// that are not UTF-8 (the fuzz input was services.d/ssh.service with 0x95 bytes inside its comment).
    /// Element names and text that are not UTF-8 trap the same way.
    static let notUTF8: [[UInt8]] = {
        let comment: [UInt8] =
            Array("<?xml version=\"1.0\"?><!-- ".utf8) + [0x95, 0x95] + Array(" --><service-group/>".utf8)
        let name: [UInt8] = Array("<service-group><na".utf8) + [0xFF] + Array("me>x</name></service-group>".utf8)
        let text: [UInt8] = Array("<service-group><name>Caf".utf8) + [0xE9] + Array("</name></service-group>".utf8)
        return [comment, name, text]
    }()

    @Test("An Avahi file that is not UTF-8 is refused before the XML parser sees it (fuzz crash)", arguments: notUTF8)
    func avahiNotUTF8(_ bytes: [UInt8]) {
        let problems = Self.avahiProblems(bytes)
        #expect(problems.count == 1)
        #expect(problems.first?.severity == .error)
        #expect(problems.first?.message.contains("UTF-8") == true)
    }

    /// Crashed in Foundation's XMLParser (SIGSEGV, strlen of a null pointer): a processing instruction without
    /// data (the fuzz input began `<?xmord.00?>`).
    @Test(
        "An Avahi file with a processing instruction is refused (fuzz crash)",
        arguments: ["<?xmord.00?>\nord", "<?a?><service-group/>", "<service-group><?b?></service-group>"])
    func avahiProcessingInstruction(_ text: String) {
        let problems = Self.avahiProblems(Array(text.utf8))
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("processing instruction") == true)
    }

    @Test("An Avahi file with an XML declaration still reads")
    func avahiDeclarationStillReads() throws {
        let file = try AvahiServiceFile(
            contents: """
                <?xml version="1.0" standalone='no'?>
                <service-group><name>x</name><service><type>_x._tcp</type><port>1</port></service></service-group>
                """, file: "fuzz.service", hostName: "myhost")
        #expect(file.services.map(\.name) == ["x"])
    }

    /// Accepted although the responder refuses it: a `.dnssd` instance name holding NUL bytes, which RFC 6763
    /// §4.1.1 forbids (no control characters). (Fuzz invariant: "… and _x._tcp make no instance name".)
    @Test(
        "A .dnssd Name= with control characters is refused (fuzz finding)",
        arguments: ["U\u{0}\u{0}x", "tab\there", "bell\u{7}", "del\u{7F}"])
    func dnssdControlCharacters(_ name: String) {
        let problems = Self.dnssdProblems("[Service]\nName=\(name)\nType=_x._tcp\nPort=1\n")
        #expect(problems.count == 1)
        #expect(problems.first?.line == 2)
        #expect(problems.first?.message.contains("control character") == true)
    }

    /// Accepted although the responder refuses it: an instance name and a type whose domain is long, together
    /// longer than a DNS name may be (255 bytes). The fuzz input had a `Type=` with a domain of about 230 bytes.
    /// (Fuzz invariant: "… and _x._tcp.… make no instance name".)
    static let longDomain = (0..<4).map { _ in String(repeating: "d", count: 55) }.joined(separator: ".")

    @Test("A .dnssd service whose full name would exceed 255 bytes is refused (fuzz finding)")
    func dnssdFullNameTooLong() throws {
        let problems = Self.dnssdProblems(
            "[Service]\nName=\(String(repeating: "n", count: 30))\nType=_x._tcp.\(Self.longDomain)\nPort=1\n")
        #expect(problems.count == 1)
        #expect(problems.first?.line == 2)
        #expect(problems.first?.message.contains("instance name") == true)
        // The same type with a short name still fits.
        let file = try SystemdDNSSDFile(
            contents: "[Service]\nName=n\nType=_x._tcp.\(Self.longDomain)\nPort=1\n",
            file: "fuzz.dnssd", hostName: "myhost")
        #expect(file.service.name == "n")
    }

    @Test("An Avahi service whose full name would exceed 255 bytes is refused (fuzz finding)")
    func avahiFullNameTooLong() {
        let group = { (name: String) in
            Array(
                """
                <service-group><name>\(name)</name><service><type>_x._tcp</type>
                <domain-name>\(Self.longDomain)</domain-name><port>1</port></service></service-group>
                """.utf8)
        }
        let problems = Self.avahiProblems(group(String(repeating: "n", count: 30)))
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("longer than 255 bytes") == true)
        #expect(Self.avahiProblems(group("n")).isEmpty)
    }

    @Test("An Avahi <name> with a control character inside is refused; one with spaces around it is trimmed")
    func avahiControlCharacters() {
        let tab = Self.avahiProblems(
            Array(
                """
                <service-group><name>a\tb</name><service><type>_x._tcp</type><port>1</port></service></service-group>
                """.utf8))
        #expect(tab.map(\.message).contains { $0.contains("control character") })
        let spaced = Self.avahiProblems(
            Array(
                """
                <service-group><name>\n  a b \t</name><service><type>_x._tcp</type><port>1</port></service></service-group>
                """.utf8))
        #expect(spaced.isEmpty)
    }
}
