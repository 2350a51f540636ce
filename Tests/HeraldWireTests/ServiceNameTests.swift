import Testing

@testable import HeraldWire

// MARK: - Service types

@Suite("ServiceType parsing")
struct ServiceNameTypeParsingTests {
    @Test(
        "plain type in every spelling people type",
        arguments: [
            "_http._tcp", "_http._tcp.", "_http._tcp.local", "_http._tcp.local.", "_HTTP._TCP.LOCAL.",
        ])
    func plainType(text: String) throws {
        let type = try ServiceType(text)
        #expect(type.name.lowercased() == "http")
        #expect(type.transport == .tcp)
        #expect(type.subtype == nil)
        #expect(!type.hasSubtype)
        #expect(type.domain == "local.")
        #expect(type.fullName == "_http._tcp.local.")
        #expect(type.baseTypeName == "_http._tcp.local.")
        #expect(type.description.lowercased() == "_http._tcp")
    }

    @Test(
        "subtype in every spelling",
        arguments: [
            "_printer._sub._http._tcp", "_printer._sub._http._tcp.", "_printer._sub._http._tcp.local",
            "_printer._sub._http._tcp.local.", "_printer._SUB._http._Tcp.Local.",
        ])
    func subtype(text: String) throws {
        let type = try ServiceType(text)
        #expect(type.name == "http")
        #expect(type.transport == .tcp)
        #expect(type.subtype == Array("_printer".utf8))
        #expect(type.hasSubtype)
        #expect(type.domain == "local.")
        #expect(type.fullName == "_printer._sub._http._tcp.local.")
        #expect(type.baseTypeName == "_http._tcp.local.")
        #expect(type.baseType == (try ServiceType("_http._tcp")))
        #expect(type.description == "_printer._sub._http._tcp")
    }

    @Test func udpAndOtherDomain() throws {
        let type = try ServiceType("_sleep-proxy._udp.example.com")
        #expect(type.name == "sleep-proxy")
        #expect(type.transport == .udp)
        #expect(type.domain == "example.com.")
        #expect(type.fullName == "_sleep-proxy._udp.example.com.")
        #expect(type.description == "_sleep-proxy._udp.example.com.")
        #expect(try ServiceType(type.description) == type)
    }

    @Test func transportIsCaseInsensitive() throws {
        #expect(try ServiceType("_ipp._TCP").transport == .tcp)
        #expect(try ServiceType("_ipp._Udp").transport == .udp)
        #expect(ServiceType.Transport(label: Array("_TcP".utf8)) == .tcp)
        #expect(ServiceType.Transport(label: Array("_tcpx".utf8)) == nil)
        // The canonical lower-case transport is what goes on the wire.
        #expect(try ServiceType("_ipp._TCP").fullName.isIdentical(to: "_ipp._tcp.local."))
    }

    @Test func equalityIgnoresASCIICase() throws {
        let a = try ServiceType("_HTTP._tcp.LOCAL.")
        let b = try ServiceType("_http._TCP")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a.name == "HTTP")  // case kept for display
        #expect(try ServiceType("_Printer._sub._http._tcp") == (try ServiceType("_printer._sub._http._tcp")))
        #expect(try ServiceType("_http._tcp") != (try ServiceType("_http._udp")))
        #expect(try ServiceType("_http._tcp") != (try ServiceType("_printer._sub._http._tcp")))
        #expect(try ServiceType("_http._tcp") != (try ServiceType("_http._tcp.example.")))
    }

    @Test func fromFullName() throws {
        let type = try ServiceType(fullName: "_printer._sub._ipp._tcp.local.")
        #expect(type.name == "ipp")
        #expect(type.subtype == Array("_printer".utf8))
        #expect(try ServiceType(fullName: "_ipp._tcp.") == (try ServiceType("_ipp._tcp.local.")))
        #expect(throws: ServiceNameError.missingUnderscore("ipp")) { try ServiceType(fullName: "ipp._tcp.local.") }
    }

    @Test(
        "round trip text → parts → text and name → parts → name",
        arguments: [
            "_http._tcp", "_ipp._tcp", "_airplay._tcp", "_raop._tcp", "_sleep-proxy._udp",
            "_printer._sub._http._tcp", "_universal._sub._ipp._tcp", "_http._tcp.example.com.",
            "_odd\\.sub x._sub._http._tcp", "_a1._udp.b.c.",
        ])
    func roundTrip(text: String) throws {
        let type = try ServiceType(text)
        #expect(type.description == text)
        #expect(try ServiceType(type.description) == type)
        let fromName = try ServiceType(fullName: type.fullName)
        #expect(fromName == type)
        #expect(fromName.fullName.isIdentical(to: type.fullName))
        let rebuilt = try ServiceType(
            name: type.name, transport: type.transport, subtype: type.subtype,
            domain: type.domain)
        #expect(rebuilt.fullName.isIdentical(to: type.fullName))
    }

    @Test func malformedTypes() {
        #expect(throws: ServiceNameError.missingUnderscore("http")) { try ServiceType("http._tcp") }
        #expect(throws: ServiceNameError.missingTransport("_http")) { try ServiceType("_http") }
        #expect(throws: ServiceNameError.missingTransport("_http.")) { try ServiceType("_http.") }
        #expect(throws: ServiceNameError.invalidTransport("_tpc")) { try ServiceType("_http._tpc") }
        #expect(throws: ServiceNameError.invalidTransport("local")) { try ServiceType("_http.local.") }
        #expect(throws: ServiceNameError.invalidTransport("_sctp")) { try ServiceType("_http._sctp.local") }
        #expect(throws: ServiceNameError.notAServiceType("")) { try ServiceType("") }
        #expect(throws: ServiceNameError.notAServiceType(".")) { try ServiceType(".") }
        #expect(throws: ServiceNameError.notAServiceType("_printer._sub")) { try ServiceType("_printer._sub") }
        #expect(throws: ServiceNameError.missingTransport("_printer._sub._http")) {
            try ServiceType("_printer._sub._http")
        }
        #expect(throws: ServiceNameError.missingSubtype("_sub._http._tcp")) { try ServiceType("_sub._http._tcp") }
        #expect(throws: ServiceNameError.invalidName("_http..tcp", .emptyLabel)) { try ServiceType("_http..tcp") }
        #expect(throws: ServiceNameError.invalidName("_http\\", .invalidEscape("\\"))) { try ServiceType("_http\\") }
        #expect(throws: ServiceNameError.serviceEnumerationName("_services._dns-sd._udp.local.")) {
            try ServiceType("_services._dns-sd._udp.local.")
        }
    }

    @Test func fullNameLongerThan255BytesIsRefused() throws {
        // The domain alone takes 254 bytes; with `_http._tcp` in front the name would take 265.
        let label = String(repeating: "d", count: 63)
        let domain = try DNSName("\(label).\(label).\(label).\(String(label.prefix(60)))")
        #expect(domain.wireLength == 254)
        #expect(
            throws: ServiceNameError.invalidName(
                "_http._tcp." + domain.description,
                .nameTooLong(length: 265))
        ) {
            try ServiceType(name: "http", transport: .tcp, domain: domain)
        }
    }
}

@Suite("Service names: as liberal as Avahi and mDNSResponder, RFC 6335 §5.1 as warnings")
struct ServiceNameRFC6335RuleTests {
    @Test(
        "valid service names",
        arguments: [
            "http", "a", "A", "ipp", "sleep-proxy", "x-y-z", "h2", "9p", "a1b2", "ipp-2", "HTTP", "MixedCase",
            "abcdefghijklmno",  // 15 characters: the most RFC 6335 registers
            "a2345678901234z", "12345678901234a",
        ])
    func valid(name: String) throws {
        try ServiceType.validate(serviceName: name)
        let type = try ServiceType("_\(name)._tcp")
        #expect(type.name == name)
        #expect(type.registrationWarnings.isEmpty)
        #expect(try ServiceType(name: name, transport: .udp).name == name)
    }

    /// Real apps use longer names: barrier (in Debian) registers and browses `_barrierServerZeroconf._tcp`.
    /// Avahi accepts them and mDNSResponder only logs; so does Herald, with a warning.
    @Test func longerThanFifteenCharactersIsAcceptedWithAWarning() throws {
        let barrier = try ServiceType("_barrierServerZeroconf._tcp")
        #expect(barrier.name == "barrierServerZeroconf")
        #expect(barrier.fullName == "_barrierServerZeroconf._tcp.local.")
        #expect(barrier.registrationWarnings == [.longerThanRegistrable("barrierServerZeroconf")])
        #expect(barrier.registrationWarnings[0].description.contains("21 characters"))
        let sixteen = String(repeating: "x", count: 16)
        #expect(try ServiceType(name: sixteen, transport: .tcp).name == sixteen)
        #expect(try ServiceType("_\(String(repeating: "x", count: 15))._tcp").registrationWarnings.isEmpty)
    }

    @Test func sixtyTwoCharactersFillTheLabel() throws {
        let most = String(repeating: "y", count: 62)
        let type = try ServiceType("_\(most)._udp")
        #expect(type.fullName.labels[0].count == 63)
        #expect(throws: ServiceNameError.serviceNameTooLong(most + "y")) {
            try ServiceType(name: most + "y", transport: .tcp)
        }
        #expect(throws: ServiceNameError.serviceNameTooLong(most + "y")) {
            try ServiceType.validate(serviceName: most + "y")
        }
        // In text, a 64-byte label is not a name at all.
        #expect(throws: (any Error).self) { try ServiceType("_\(most)y._tcp") }
    }

    @Test func emptyName() {
        #expect(throws: ServiceNameError.emptyServiceName) { try ServiceType("_._tcp") }
        #expect(throws: ServiceNameError.emptyServiceName) { try ServiceType(name: "", transport: .tcp) }
        #expect(throws: ServiceNameError.emptyServiceName) { try ServiceType.validate(serviceName: "") }
    }

    @Test(
        "only letters, digits, hyphens and underscores",
        arguments: [
            ("foo bar", " "), ("café", "é"), ("a+b", "+"), ("a\\.b", "\\."), ("ipp*", "*"),
        ])
    func invalidCharacters(name: String, character: String) throws {
        #expect(throws: ServiceNameError.invalidCharacter(name, character: character)) {
            try ServiceType("_\(name)._tcp")
        }
    }

    @Test func invalidCharacterMessageNamesRuleAndText() {
        let error = ServiceNameError.invalidCharacter("foo bar", character: " ")
        #expect(
            error.description.contains(
                "service name 'foo bar' may contain only letters, digits, hyphens and underscores (RFC 6335 §5.1)"))
        #expect(error.description.contains("' '"))
    }

    @Test func controlAndNonUTF8BytesAreInvalid() throws {
        #expect(throws: ServiceNameError.invalidCharacter("a\\009b", character: "\\009")) {
            try ServiceType("_a\\009b._tcp")
        }
        let wire = try DNSName(labels: [[UInt8(ascii: "_"), 0xFF], Array("_tcp".utf8)])
        #expect(throws: ServiceNameError.invalidCharacter("\\255", character: "\\255")) {
            try ServiceType(fullName: wire)
        }
    }

    /// mDNSResponder accepts these (digits only, doubled hyphens, interior underscores); Avahi accepts them all.
    @Test(
        "RFC 6335 registration rules are warnings",
        arguments: [
            ("123", [ServiceNameWarning.noLetter("123")]),
            ("1-2", [.noLetter("1-2")]),
            ("ht--tp", [.consecutiveHyphens("ht--tp")]),
            ("foo_bar", [.underscore("foo_bar")]),
            ("-http", [.hyphenAtEnd("-http")]),
            ("http-", [.hyphenAtEnd("http-")]),
            ("-", [.noLetter("-"), .hyphenAtEnd("-")]),
        ])
    func registrationRulesWarn(name: String, warnings: [ServiceNameWarning]) throws {
        let type = try ServiceType("_\(name)._tcp")
        #expect(type.name == name)
        #expect(type.registrationWarnings == warnings)
        for warning in warnings { #expect(warning.description.contains("RFC 6335 §5.1")) }
    }

    @Test func everyErrorExplainsItself() {
        let errors: [ServiceNameError] = [
            .notAServiceType("x"), .missingUnderscore("http"), .emptyServiceName,
            .serviceNameTooLong(String(repeating: "a", count: 63)), .invalidCharacter("a b", character: " "),
            .missingTransport("_a"),
            .invalidTransport("_x"), .missingSubtype("_sub._a._tcp"), .emptySubtype,
            .subtypeTooLong("x", length: 64), .serviceEnumerationName("x"), .emptyInstance,
            .instanceTooLong("x", length: 64), .instanceControlCharacter("x"), .instanceNotUTF8("x"),
            .incompleteInstanceName("x"), .unescapedDot("x", suggestion: "y"), .instanceTypeHasSubtype("x"),
        ]
        for error in errors {
            #expect(
                error.description.contains("RFC"),
                "\(error) should cite its rule")
        }
        #expect(
            ServiceNameError.serviceNameTooLong(String(repeating: "a", count: 63)).description.contains("63 characters")
        )
        #expect(ServiceNameError.missingUnderscore("http").description.contains("'http'"))
    }
}

@Suite("ServiceType subtypes, domains and enumeration")
struct ServiceNameTypeOperationTests {
    @Test func withSubtype() throws {
        let http = try ServiceType("_http._tcp")
        let printer = try http.withSubtype("_printer")
        #expect(printer.fullName == "_printer._sub._http._tcp.local.")
        #expect(printer.description == "_printer._sub._http._tcp")
        #expect(try printer.withSubtype(nil) == http)
        #expect(try http.withSubtype([0x41, 0x2E, 0x20]).description == "A\\. ._sub._http._tcp")
        #expect(throws: ServiceNameError.emptySubtype) { try http.withSubtype("") }
        #expect(try http.withSubtype(String(repeating: "s", count: 63)).subtype?.count == 63)
        #expect(throws: ServiceNameError.subtypeTooLong(String(repeating: "s", count: 64), length: 64)) {
            try http.withSubtype(String(repeating: "s", count: 64))
        }
        // RFC 6763 §7.1: a subtype need not start with an underscore, and may hold any bytes.
        let bare = try http.withSubtype("color printer")
        #expect(try ServiceType(bare.description) == bare)
        #expect(bare.subtype == Array("color printer".utf8))
    }

    @Test func subtypeEqualityIgnoresASCIICase() throws {
        let http = try ServiceType("_http._tcp")
        #expect(try http.withSubtype("_Printer") == (try http.withSubtype("_printer")))
        #expect(try http.withSubtype("_Printer") != (try http.withSubtype("_scanner")))
    }

    @Test func memberwiseInitializer() throws {
        let type = try ServiceType(name: "ipp", transport: .tcp, subtype: Array("_universal".utf8))
        #expect(type.fullName == "_universal._sub._ipp._tcp.local.")
        #expect(try ServiceType(name: "_ipp", transport: .tcp).name == "ipp")  // underscore tolerated
        #expect(try ServiceType(name: "ipp", transport: .tcp, domain: .root).domain == "local.")
        #expect(throws: ServiceNameError.invalidCharacter("i\\.pp", character: "\\.")) {
            try ServiceType(name: "i.pp", transport: .tcp)
        }
    }

    @Test func inDomain() throws {
        let type = try ServiceType("_printer._sub._ipp._tcp").inDomain("example.org.")
        #expect(type.fullName == "_printer._sub._ipp._tcp.example.org.")
        #expect(type.description == "_printer._sub._ipp._tcp.example.org.")
        #expect(try type.inDomain(.root).domain == ServiceType.defaultDomain)
    }

    @Test func serviceEnumeration() throws {
        #expect(ServiceType.serviceEnumeration.description == "_services._dns-sd._udp.local.")
        #expect(ServiceType.isServiceEnumeration(ServiceType.serviceEnumeration))
        #expect(ServiceType.isServiceEnumeration("_SERVICES._DNS-SD._UDP.LOCAL."))
        #expect(ServiceType.isServiceEnumeration("_services._dns-sd._udp.example.com."))
        #expect(!ServiceType.isServiceEnumeration("_http._tcp.local."))
        #expect(!ServiceType.isServiceEnumeration("_dns-sd._udp.local."))
        #expect(!ServiceType.isServiceEnumeration("x._services._dns-sd._udp.local."))
        #expect(!ServiceType.isServiceEnumeration(.root))
        #expect(try ServiceType.serviceEnumeration(in: "example.com.") == "_services._dns-sd._udp.example.com.")
        #expect(try ServiceType.serviceEnumeration(in: ServiceType.defaultDomain) == ServiceType.serviceEnumeration)
    }
}

// MARK: - Service instance names

@Suite("ServiceInstanceName")
struct ServiceNameInstanceTests {
    @Test(
        "instances with dots, spaces, backslashes and UTF-8",
        arguments: [
            "Café Printer", "Living Room.Speaker", "back\\slash", "My Printer", "a", "日本語のプリンター",
            "Dot.At.End.", ".leading", "Tab-free (2)", "emoji 🎶 box",
        ])
    func freeFormInstance(instance: String) throws {
        let type = try ServiceType("_ipp._tcp")
        let name = try ServiceInstanceName(instance: instance, type: type)
        #expect(name.instance == instance)
        #expect(name.type == type)
        #expect(name.domain == "local.")
        // The instance is one label, whatever it contains.
        #expect(name.fullName.labelCount == 4)
        #expect(name.fullName.firstLabel == Array(instance.utf8))
        #expect(name.fullName.parent == type.fullName)
        // Round trips: name → parts → name, text → parts → text.
        let split = try ServiceInstanceName(fullName: name.fullName)
        #expect(split.instance == instance)
        #expect(split.type == type)
        #expect(split.fullName.isIdentical(to: name.fullName))
        let parsed = try ServiceInstanceName(parsing: name.description)
        #expect(parsed.instance == instance)
        #expect(parsed.description == name.description)
    }

    @Test func presentationEscapes() throws {
        let type = try ServiceType("_airplay._tcp")
        #expect(
            try ServiceInstanceName(instance: "Living Room.Speaker", type: type).description
                == "Living Room\\.Speaker._airplay._tcp.local.")
        #expect(
            try ServiceInstanceName(instance: "back\\slash", type: type).description
                == "back\\\\slash._airplay._tcp.local.")
        #expect(
            try ServiceInstanceName(instance: "Café Printer", type: type).description
                == "Café Printer._airplay._tcp.local.")
    }

    @Test func parsingEscapedPresentation() throws {
        let name = try ServiceInstanceName(parsing: "My\\.Printer._ipp._tcp.local.")
        #expect(name.instance == "My.Printer")
        #expect(name.type == (try ServiceType("_ipp._tcp")))
        #expect(name.domain == "local.")
        #expect(try ServiceInstanceName(parsing: "My\\.Printer._ipp._tcp") == name)  // local. by default
        #expect(try ServiceInstanceName(parsing: "Caf\\195\\169._ipp._tcp.local.").instance == "Café")
        #expect(try ServiceInstanceName(parsing: "Kitchen._http._tcp.example.com.").domain == "example.com.")
    }

    @Test func unescapedDotGetsAHint() {
        #expect(
            throws: ServiceNameError.unescapedDot(
                "Living Room.Speaker._airplay._tcp.local.",
                suggestion: "Living Room\\.Speaker._airplay._tcp.local.")
        ) {
            try ServiceInstanceName(parsing: "Living Room.Speaker._airplay._tcp.local.")
        }
    }

    @Test func splittingFullNames() throws {
        let name = try ServiceInstanceName(fullName: "Office._ipp._tcp.example.org.")
        #expect(name.instance == "Office")
        #expect(name.type.name == "ipp")
        #expect(name.type.transport == .tcp)
        #expect(name.domain == "example.org.")
        #expect(name.type.domain == name.domain)
        #expect(try ServiceInstanceName(fullName: "Office._ipp._tcp.").domain == "local.")
    }

    @Test("full names with too few labels", arguments: ["_http._tcp.", "Foo.", "."])
    func tooShort(text: String) throws {
        let name = try DNSName(text)
        #expect(throws: ServiceNameError.incompleteInstanceName(name.description)) {
            try ServiceInstanceName(fullName: name)
        }
    }

    @Test func fullNamesWithoutTransport() throws {
        #expect(throws: ServiceNameError.invalidTransport("_xyz")) {
            try ServiceInstanceName(fullName: "Foo._http._xyz.local.")
        }
        #expect(throws: ServiceNameError.invalidTransport("local")) {
            try ServiceInstanceName(fullName: "Foo._http.local.")
        }
        #expect(throws: ServiceNameError.missingUnderscore("http")) {
            try ServiceInstanceName(fullName: "Foo.http._tcp.local.")
        }
        // An instance is never under a subtype.
        #expect(throws: ServiceNameError.invalidTransport("_http")) {
            try ServiceInstanceName(fullName: "Foo._sub._http._tcp.local.")
        }
        #expect(throws: ServiceNameError.invalidCharacter("a b", character: " ")) {
            try ServiceInstanceName(parsing: "Foo._a\\032b._udp")
        }
        #expect(
            try ServiceInstanceName(parsing: "Foo._barrierServerZeroconf._tcp").type.name == "barrierServerZeroconf")
    }

    @Test func sixtyThreeByteLimit() throws {
        let type = try ServiceType("_http._tcp")
        let ascii63 = String(repeating: "n", count: 63)
        #expect(try ServiceInstanceName(instance: ascii63, type: type).instance == ascii63)
        let ascii64 = ascii63 + "n"
        #expect(throws: ServiceNameError.instanceTooLong(ascii64, length: 64)) {
            try ServiceInstanceName(instance: ascii64, type: type)
        }
        // Bytes, not characters: 31 two-byte "é" and one "a" make 63 bytes; one more "é" makes 65.
        let utf63 = String(repeating: "é", count: 31) + "a"
        #expect(utf63.utf8.count == 63)
        #expect(try ServiceInstanceName(instance: utf63, type: type).fullName.firstLabel?.count == 63)
        let utf64 = String(repeating: "é", count: 32)
        #expect(throws: ServiceNameError.instanceTooLong(utf64, length: 64)) {
            try ServiceInstanceName(instance: utf64, type: type)
        }
        #expect(
            throws: ServiceNameError.invalidName(
                ascii64 + "._http._tcp.local.", .labelTooLong(length: 64))
        ) {
            try ServiceInstanceName(parsing: ascii64 + "._http._tcp.local.")
        }
    }

    @Test func otherInstanceRules() throws {
        let type = try ServiceType("_http._tcp")
        #expect(throws: ServiceNameError.emptyInstance) { try ServiceInstanceName(instance: "", type: type) }
        #expect(throws: ServiceNameError.instanceControlCharacter("tab\\009here")) {
            try ServiceInstanceName(instance: "tab\there", type: type)
        }
        #expect(throws: ServiceNameError.instanceControlCharacter("del\\127")) {
            try ServiceInstanceName(instance: "del\u{7F}", type: type)
        }
        let notUTF8 = try DNSName(labels: [[0x41, 0xFF], Array("_http".utf8), Array("_tcp".utf8)])
        #expect(throws: ServiceNameError.instanceNotUTF8("A\\255")) { try ServiceInstanceName(fullName: notUTF8) }
        #expect(throws: ServiceNameError.instanceTypeHasSubtype("_printer._sub._http._tcp")) {
            try ServiceInstanceName(instance: "x", type: type.withSubtype("_printer"))
        }
    }

    @Test func domainOverride() throws {
        let type = try ServiceType("_http._tcp")
        let name = try ServiceInstanceName(instance: "Web", type: type, domain: "example.net.")
        #expect(name.fullName == "Web._http._tcp.example.net.")
        #expect(name.type.domain == "example.net.")
        #expect(try ServiceInstanceName(instance: "Web", type: name.type).domain == "example.net.")
    }

    @Test func equalityIgnoresASCIICaseOnly() throws {
        let a = try ServiceInstanceName(parsing: "Kitchen._HTTP._tcp.LOCAL.")
        let b = try ServiceInstanceName(parsing: "kitchen._http._tcp.local.")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a.instance == "Kitchen")
        // Non-ASCII letters are compared exactly (RFC 6762 §16).
        #expect(
            try ServiceInstanceName(parsing: "CAFÉ._http._tcp") != (try ServiceInstanceName(parsing: "café._http._tcp"))
        )
    }
}

// MARK: - Renaming

@Suite("Automatic renaming")
struct ServiceNameRenameTests {
    @Test func instanceRenameSequence() throws {
        #expect(ServiceInstanceName.renamed("Foo", attempt: 2) == "Foo (2)")
        #expect(ServiceInstanceName.renamed("Foo", attempt: 3) == "Foo (3)")
        #expect(ServiceInstanceName.renamed("Foo (2)", attempt: 3) == "Foo (3)")
        var name = "Foo"
        for attempt in 2...12 {
            name = ServiceInstanceName.renamed(name, attempt: attempt)
            #expect(name == "Foo (\(attempt))")
        }
        #expect(ServiceInstanceName.renamed("Foo (2)", attempt: 1) == "Foo")
    }

    @Test(
        "only a ` (digits)` suffix counts as an earlier rename",
        arguments: [
            ("Foo(2)", "Foo(2) (3)"), ("Foo (x)", "Foo (x) (3)"), ("Foo (2) bar", "Foo (2) bar (3)"),
            (" (2)", " (2) (3)"), ("Foo ()", "Foo () (3)"), ("Foo (12)", "Foo (3)"), ("A (1) (2)", "A (1) (3)"),
            ("Café (9)", "Café (3)"),
        ])
    func suffixRecognition(name: String, expected: String) {
        #expect(ServiceInstanceName.renamed(name, attempt: 3) == expected)
    }

    @Test func renameTruncatesAtCharacterBoundary() {
        let ascii = String(repeating: "a", count: 63)
        #expect(ServiceInstanceName.renamed(ascii, attempt: 2) == String(repeating: "a", count: 59) + " (2)")
        #expect(ServiceInstanceName.renamed(ascii, attempt: 10) == String(repeating: "a", count: 58) + " (10)")

        // 63 bytes of two-byte characters: the cut may not land inside an "é".
        let accented = String(repeating: "é", count: 31) + "a"
        let renamed = ServiceInstanceName.renamed(accented, attempt: 2)
        #expect(renamed == String(repeating: "é", count: 29) + " (2)")
        #expect(renamed.utf8.count <= 63)

        // Four-byte characters.
        let emoji = String(repeating: "🎶", count: 15) + "abc"
        #expect(emoji.utf8.count == 63)
        #expect(ServiceInstanceName.renamed(emoji, attempt: 2) == String(repeating: "🎶", count: 14) + " (2)")

        // A combining sequence is kept or dropped whole, never left as a bare "e".
        let combining = String(repeating: "x", count: 57) + "e\u{301}" + "yyy"
        #expect(combining.utf8.count == 63)
        #expect(ServiceInstanceName.renamed(combining, attempt: 2) == String(repeating: "x", count: 57) + " (2)")

        // A space left at the cut is dropped rather than doubled.
        let spaced = String(repeating: "a", count: 58) + " bcd"
        #expect(ServiceInstanceName.renamed(spaced, attempt: 2) == String(repeating: "a", count: 58) + " (2)")

        // An earlier counter is removed before measuring.
        let counted = String(repeating: "b", count: 59) + " (2)"
        #expect(ServiceInstanceName.renamed(counted, attempt: 3) == String(repeating: "b", count: 59) + " (3)")
        #expect(ServiceInstanceName.renamed(counted, attempt: 10) == String(repeating: "b", count: 58) + " (10)")
    }

    @Test func renamedResultIsAlwaysAValidInstance() throws {
        let type = try ServiceType("_ipp._tcp")
        for base in ["x", "Café Printer", String(repeating: "é", count: 31) + "a", String(repeating: "z", count: 63)] {
            for attempt in [2, 9, 10, 99, 100, 12345] {
                let label = ServiceInstanceName.renamed(base, attempt: attempt)
                #expect(label.utf8.count <= 63)
                #expect(label.hasSuffix(" (\(attempt))"))
                _ = try ServiceInstanceName(instance: label, type: type)
            }
        }
    }

    @Test func instanceNameRenamed() throws {
        let original = try ServiceInstanceName(parsing: "Living Room\\.Speaker._airplay._tcp.local.")
        let second = try original.renamed(attempt: 2)
        #expect(second.instance == "Living Room.Speaker (2)")
        #expect(second.type == original.type)
        #expect(second.description == "Living Room\\.Speaker (2)._airplay._tcp.local.")
        #expect(try second.renamed(attempt: 3).instance == "Living Room.Speaker (3)")
    }

    @Test func instanceRenameRespectsTheWholeNameLimit() throws {
        // A domain long enough that only 50 bytes remain for the instance label.
        let label = String(repeating: "d", count: 63)
        let domain = try DNSName("\(label).\(label).\(label)")
        let type = try ServiceType(name: "http", transport: .tcp, domain: domain)
        #expect(type.fullName.wireLength == 204)
        let instance = String(repeating: "a", count: 50)
        let name = try ServiceInstanceName(instance: instance, type: type)
        #expect(name.fullName.wireLength == 255)
        let renamed = try name.renamed(attempt: 2)
        #expect(renamed.instance == String(repeating: "a", count: 46) + " (2)")
        #expect(renamed.fullName.wireLength == 255)
    }

    @Test func hostRenames() {
        #expect(ServiceInstanceName.renamedHost("host", attempt: 2) == "host-2")
        #expect(ServiceInstanceName.renamedHost("host", attempt: 3) == "host-3")
        #expect(ServiceInstanceName.renamedHost("host-2", attempt: 3) == "host-3")
        #expect(ServiceInstanceName.renamedHost("host-10", attempt: 11) == "host-11")
        #expect(ServiceInstanceName.renamedHost("my-host", attempt: 2) == "my-host-2")
        #expect(ServiceInstanceName.renamedHost("my-host-7", attempt: 2) == "my-host-2")
        #expect(ServiceInstanceName.renamedHost("host-", attempt: 2) == "host--2")
        #expect(ServiceInstanceName.renamedHost("42", attempt: 2) == "42-2")
        #expect(ServiceInstanceName.renamedHost("-5", attempt: 2) == "-5-2")
        #expect(ServiceInstanceName.renamedHost("host-5", attempt: 1) == "host")
        var name = "raspberrypi"
        for attempt in 2...11 {
            name = ServiceInstanceName.renamedHost(name, attempt: attempt)
            #expect(name == "raspberrypi-\(attempt)")
        }
    }

    @Test func hostRenameTruncation() {
        let long = String(repeating: "h", count: 63)
        #expect(ServiceInstanceName.renamedHost(long, attempt: 2) == String(repeating: "h", count: 61) + "-2")
        #expect(ServiceInstanceName.renamedHost(long, attempt: 100) == String(repeating: "h", count: 59) + "-100")
        // A hyphen left at the cut is dropped rather than doubled.
        let hyphen = String(repeating: "h", count: 60) + "-ab"
        #expect(ServiceInstanceName.renamedHost(hyphen, attempt: 2) == String(repeating: "h", count: 60) + "-2")
        // UTF-8 host labels are cut between characters.
        let umlauts = String(repeating: "ü", count: 31) + "x"
        #expect(ServiceInstanceName.renamedHost(umlauts, attempt: 2) == String(repeating: "ü", count: 30) + "-2")
    }
}
