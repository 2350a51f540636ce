import HeraldBroker
import Testing

/// Inputs found by the manifest fuzz target in `Fuzz/` (see `Fuzz/README.md`), reduced, and a few hand-made
/// neighbours of them. Each crashed the whole process before its fix; now each is refused as a syntax error.
@Suite("Fuzz regressions (manifests)")
struct ManifestFuzzRegressionTests {
    /// Crashed in libxml2 (SIGSEGV): an XML declaration naming an encoding libxml2 cannot use for the text that
    /// follows. libxml2 reported the error and stopped, and the property-list reader then aborted the parser
    /// from inside that error callback. (Fuzz finding, minimized: the declaration `encoding="UTF7"` and one byte
    /// 0x82; the cases below are all-ASCII relatives that crashed the same way.)
    static let unusableEncodings: [String] = [
        "<?xml version=\"1.0\" encoding=\"UTF-32\"?><plist>+AGEAYg-</plist>",
        "<?xml version=\"1.0\" encoding=\"UTF-7\"?><plist><string>x</string>\u{1B}$B</plist>",
        "<?xml version=\"1.0\" encoding=\"EBCDIC-US\"?><plist><true/></plist>",
        "<?xml version=\"1.0\" encoding=\"UTF7\"",
    ]

    @Test(
        "An XML declaration of an encoding that cannot be used is a syntax error (fuzz crash)",
        arguments: unusableEncodings)
    func unusableEncoding(_ text: String) {
        expectSyntaxError(Array(text.utf8))
    }

    @Test("The minimized fuzz input: an unsupported encoding declaration and a byte it cannot decode")
    func unsupportedEncodingMinimized() {
        expectSyntaxError(Array("<?xml version=\"1.0\" encoding=\"UTF7\"".utf8) + [0x82])
    }

    /// Trapped in Foundation's XMLParser (SIGILL): an element name holding a byte that is not UTF-8 (0xFF).
    /// The first 13 bytes of the fuzz input are enough.
    static let nonUTF8ElementName: [UInt8] = [
        0x3C, 0x70, 0x6C, 0x69, 0x73, 0xFF, 0x1F, 0x3C, 0x64, 0x69, 0x63, 0x74, 0x3E, 0x3C, 0x6B, 0x65, 0x79, 0x3E,
        0x79, 0x3E, 0x3C, 0x69, 0x6E, 0x74, 0x65, 0x67, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2D, 0x30,
        0x31, 0x2D, 0x30, 0x31, 0x54, 0x30, 0x30, 0x3A, 0x30, 0x30, 0x22, 0x74, 0x69, 0x63, 0x74, 0x61, 0x63, 0x74,
    ]

    @Test("A property list that is not UTF-8 is refused before the XML parser sees it (fuzz crash)")
    func nonUTF8PropertyList() {
        expectSyntaxError(Self.nonUTF8ElementName, mentioning: "UTF-8")
        expectSyntaxError(Array(Self.nonUTF8ElementName.prefix(13)), mentioning: "UTF-8")
        // Neighbours: a stray byte in a comment, and Latin-1 text in an otherwise valid manifest.
        expectSyntaxError(Array("<plist><!-- ".utf8) + [0x95] + Array(" --><dict/></plist>".utf8), mentioning: "UTF-8")
        expectSyntaxError(
            Array("<plist><dict><key>name</key><string>Caf".utf8) + [0xE9] + Array("</string></dict></plist>".utf8),
            mentioning: "UTF-8")
    }

    /// Crashed in Foundation's XMLParser (SIGSEGV, strlen of a null pointer): a processing instruction without
    /// data. The fuzz input began `<?xngc?>`; `<?a?>` alone is enough.
    @Test(
        "A processing instruction is a syntax error (fuzz crash)",
        arguments: [
            "<?xngc?>\nNS>onnj", "<?a?>", "<plist><?a?><dict/></plist>", "<plist><dict/></plist><?b c?>",
            "<?xml?><plist/>",
        ])
    func processingInstruction(_ text: String) {
        expectSyntaxError(Array(text.utf8), mentioning: "processing instruction")
    }

    @Test("The XML declaration is still allowed, after a byte order mark too")
    func xmlDeclarationStillReads() throws {
        for prefix in [[], [0xEF, 0xBB, 0xBF]] as [[UInt8]] {
            let document = try ManifestParser.document(
                prefix + Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist><true/></plist>".utf8),
                format: .propertyList)
            #expect(document == .bool(true))
        }
    }

    @Test("The same manifest in UTF-8 still reads")
    func utf8PropertyListStillReads() throws {
        let document = try ManifestParser.document(
            Array("<plist><dict><key>name</key><string>Café</string></dict></plist>".utf8), format: .propertyList)
        #expect(document == .object([.init(key: "name", value: .string("Café"), line: 1)]))
    }

    func expectSyntaxError(
        _ bytes: [UInt8], mentioning text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try ManifestParser.document(bytes, format: .propertyList)
            Issue.record("a broken property list was read", sourceLocation: sourceLocation)
        } catch {
            #expect(error.problems.map(\.rule) == [.syntax], sourceLocation: sourceLocation)
            if let text {
                #expect(error.description.contains(text), "\(error.description)", sourceLocation: sourceLocation)
            }
        }
    }
}
