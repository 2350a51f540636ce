import HeraldXML
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The XML reader (libexpat, no DTDs)")
struct XMLReaderTests {
    static func read(_ text: String, limits: XMLReader.Limits = .default) throws(XMLReadError) -> XMLReader.Element {
        try XMLReader(limits: limits).read(Array(text.utf8))
    }

    /// The error reading `bytes` gives; records an issue when it reads.
    static func failure(
        _ bytes: [UInt8], limits: XMLReader.Limits = .default,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> XMLReadError? {
        do {
            let root = try XMLReader(limits: limits).read(bytes)
            Issue.record("read a document that should be refused: <\(root.name)>", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    static func failure(
        _ text: String, limits: XMLReader.Limits = .default,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> XMLReadError? {
        failure(Array(text.utf8), limits: limits, sourceLocation: sourceLocation)
    }

    // MARK: - Well-formed documents

    @Test("a document reads into its elements, attributes in order, text runs and the lines of each")
    func wellFormed() throws {
        let root = try Self.read(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <group kind="demo" id='7'>
              <name lang="en">Printer</name>
              <!-- a comment is left out -->
              <item/>
              <item n="2">two<sub>inner</sub>after</item>
            </group>
            """)
        #expect(root.name == "group")
        #expect(root.attributes == [.init(name: "kind", value: "demo"), .init(name: "id", value: "7")])
        #expect(root.attribute("id") == "7" && root.attribute("missing") == nil)
        #expect(root.line == 2 && root.column == 1)
        #expect(root.children.map(\.name) == ["name", "item", "item"])
        #expect(root.children.map(\.line) == [3, 5, 6])
        #expect(root.children[0].text == "Printer" && root.children[0].column == 3)
        #expect(root.children[1].content.isEmpty)
        let second = root.children[2]
        #expect(
            second.content == [
                .text("two", line: 6),
                .element(.init(name: "sub", content: [.text("inner", line: 6)], line: 6, column: 18)),
                .text("after", line: 6),
            ])
        #expect(second.text == "twoafter")
        // The whitespace between the root's children is its text, kept as written.
        #expect(root.text.allSatisfy { $0 == " " || $0 == "\n" })
    }

    @Test("CDATA sections are text, markup inside them included, and join the text around them")
    func cdata() throws {
        let root = try Self.read("<a>x<![CDATA[<b>&amp; ]]>]]&gt;<![CDATA[]]>y</a>")
        #expect(root.text == "x<b>&amp; ]]>y")
        #expect(root.children.isEmpty)
        #expect(root.content.count == 1)
    }

    @Test("character references and the five predefined entities are replaced, in text and in attributes")
    func references() throws {
        let root = try Self.read("<a v=\"&#65;&lt;&quot;\">&#65;&#x42;&#x1F3B2; &lt;&gt;&amp;&quot;&apos;</a>")
        #expect(root.text == "AB🎲 <>&\"'")
        #expect(root.attribute("v") == "A<\"")
    }

    @Test(
        "UTF-8 text with two-, three- and four-byte characters, in names, attributes and text; a byte-order mark is skipped"
    )
    func utf8() throws {
        let text = "<café größe=\"Ü\">日本語 🎲</café>"
        let root = try Self.read(text)
        #expect(root.name == "café")
        #expect(root.attribute("größe") == "Ü")
        #expect(root.text == "日本語 🎲")
        let withMark = try XMLReader().read([0xEF, 0xBB, 0xBF] + Array(text.utf8))
        #expect(
            withMark.name == root.name && withMark.attributes == root.attributes && withMark.content == root.content)
        // Columns count characters, as libexpat does: the mark is one.
        #expect(withMark.column == 2)
    }

    @Test("namespaces are not processed: prefixed names stay as written")
    func namespacesKept() throws {
        let root = try Self.read("<p:a xmlns:p=\"urn:x\"><p:b/></p:a>")
        #expect(root.name == "p:a")
        #expect(root.attribute("xmlns:p") == "urn:x")
        #expect(root.children.map(\.name) == ["p:b"])
    }

    @Test(
        "a DOCTYPE without an internal subset is accepted and ignored: a property list's and an Avahi file's",
        arguments: [
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><true/></plist>
            """,
            """
            <?xml version="1.0" standalone='no'?><!--*-nxml-*-->
            <!DOCTYPE service-group SYSTEM "avahi-service.dtd">
            <service-group><name>x</name></service-group>
            """,
        ])
    func standardDoctype(text: String) throws {
        let root = try Self.read(text)
        #expect(["plist", "service-group"].contains(root.name))
        #expect(root.children.count == 1)
    }

    // MARK: - Malformed input

    @Test("malformed XML is refused with the line and column (in characters) of the problem")
    func malformedLine() {
        let error = Self.failure("<a>\n  <b>\n  </a>\n")
        #expect(error?.isMalformed == true)
        #expect(error?.line == 3)
        #expect(error?.column == 5)
        #expect(error?.message.contains("<b> on line 2") == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("line 3, column 5: ") == true)
        #expect(Self.failure("<a>é</b>")?.column == 7)  // 8 if bytes were counted
        let attribute = Self.failure("<a>\n<b c=d/></a>")
        #expect(attribute?.line == 2 && attribute?.isMalformed == true)
        let duplicate = Self.failure("<a x='1' x='2'/>")
        #expect(duplicate?.message.contains("duplicate attribute") == true, "\(String(describing: duplicate))")
    }

    @Test("a document that ends inside an element names the element left open")
    func unclosed() {
        let error = Self.failure("<a>\n<b></b>\n<c>")
        #expect(error?.isMalformed == true)
        #expect(error?.message.contains("<c> (line 3) is closed") == true, "\(String(describing: error))")
        #expect(Self.failure("<a><b>text")?.message.contains("<b>") == true)
        #expect(Self.failure("<a")?.isMalformed == true)
        #expect(Self.failure("<a><![CDATA[x</a>")?.isMalformed == true)
    }

    @Test("a second root element, or text after the root, is refused")
    func oneRoot() {
        #expect(Self.failure("<a/><b/>")?.message.contains("root element") == true)
        #expect(Self.failure("<a/>text")?.isMalformed == true)
        #expect(Self.failure("text<a/>")?.isMalformed == true)
        #expect(Self.failure("<a/><?xml version=\"1.0\"?>")?.message.contains("root element") == true)
    }

    @Test(
        "an empty document, or one of whitespace and comments only, holds no element",
        arguments: ["", "  \n\t", "<!-- nothing -->\n", "<?xml version=\"1.0\"?>"])
    func empty(text: String) {
        let error = Self.failure(text)
        #expect(error?.reason == .empty)
        #expect(error?.message.contains("empty") == true)
    }

    @Test("NUL bytes are refused wherever they are, with their line")
    func nulBytes() {
        let inText = Self.failure(Array("<a>\nx".utf8) + [0] + Array("y</a>".utf8))
        #expect(inText?.isMalformed == true && inText?.line == 2)
        #expect(Self.failure([0])?.isMalformed == true)
        #expect(Self.failure(Array("<a/>".utf8) + [0])?.isMalformed == true)
        #expect(Self.failure("<a>&#0;</a>")?.isMalformed == true)
    }

    @Test("bytes that are not UTF-8 are refused before parsing, with the line of the first")
    func notUTF8() {
        let error = Self.failure(Array("<a>\n\ncaf".utf8) + [0xE9] + Array("</a>".utf8))
        #expect(error?.reason == .notUTF8)
        #expect(error?.line == 3)
        #expect(error?.message == "the file is not valid UTF-8 text")
        // In a comment and in a name too; a UTF-16 byte-order mark is not UTF-8 either.
        #expect(Self.failure(Array("<a><!-- ".utf8) + [0x95] + Array(" --></a>".utf8))?.reason == .notUTF8)
        #expect(Self.failure(Array("<a".utf8) + [0xFF] + Array("/>".utf8))?.reason == .notUTF8)
        #expect(Self.failure([0xFF, 0xFE, 0x3C, 0x00, 0x61, 0x00, 0x2F, 0x00, 0x3E, 0x00])?.reason == .notUTF8)
    }

    @Test("an XML declaration of another encoding is refused; an ASCII-compatible one over ASCII text reads as UTF-8")
    func encodings() throws {
        #expect(try Self.read("<?xml version=\"1.0\" encoding=\"utf-8\"?><a/>").name == "a")
        #expect(try Self.read("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>plain</a>").text == "plain")
        for name in ["UTF-16", "UTF-7", "EBCDIC-US", "Shift_JIS"] {
            let error = Self.failure("<?xml version=\"1.0\" encoding=\"\(name)\"?><a/>")
            #expect(error?.reason == .unsupportedEncoding(name))
            #expect(error?.line == 1)
        }
        // Latin-1 declared over UTF-8 bytes would read differently than written: refused.
        #expect(
            Self.failure("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>café</a>")?.reason
                == .unsupportedEncoding("ISO-8859-1"))
    }

    // MARK: - DTDs, entities, processing instructions

    @Test("billion laughs is refused at its DOCTYPE, before a single entity is declared")
    func billionLaughs() {
        var entities = "<!ENTITY lol0 \"lol\">\n"
        for level in 1...9 {
            entities += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">\n"
        }
        let error = Self.failure("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n\(entities)]>\n<lolz>&lol9;</lolz>")
        #expect(error?.reason == .internalSubset)
        #expect(error?.line == 2)
        #expect(error?.message.contains("DOCTYPE with an internal subset") == true)
        // The quadratic variant (one large entity, referenced many times) is refused the same way.
        let quadratic =
            "<!DOCTYPE a [<!ENTITY x \"\(String(repeating: "x", count: 10_000))\">]><a>"
            + String(repeating: "&x;", count: 10_000) + "</a>"
        #expect(Self.failure(quadratic)?.reason == .internalSubset)
    }

    @Test(
        "an external entity is never read: file:///etc/passwd stays on disk",
        arguments: [
            "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>",
            "<!DOCTYPE r [<!ENTITY % p SYSTEM \"file:///etc/passwd\"> %p;]><r/>",
            "<!DOCTYPE r [<!ENTITY x PUBLIC \"-//x//y\" \"file:///etc/passwd\">]><r a=\"&x;\"/>",
        ])
    func externalEntity(text: String) {
        let error = Self.failure(text)
        #expect(error?.reason == .internalSubset)
        #expect(error?.description.contains("root:") == false)
    }

    @Test("an external DTD is never loaded, so the entities it would declare are undefined")
    func externalDTDNotLoaded() throws {
        // A DTD on disk declaring an entity with a secret: if it were loaded, the secret would be the text.
        var template = Array("/tmp/herald-xml-dtd-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let dtd = Array("<!ENTITY secret \"SECRET\">\n".utf8)
        #expect(write(fd, dtd, dtd.count) == dtd.count)
        close(fd)

        let error = Self.failure("<!DOCTYPE r SYSTEM \"file://\(path)\">\n<r>&secret;</r>")
        #expect(error?.reason == .undefinedEntity("secret"))
        #expect(error?.line == 2)
        #expect(error?.description.contains("SECRET") == false)
        // Without a DOCTYPE an unknown entity is plain malformed XML.
        #expect(Self.failure("<r>&secret;</r>")?.isMalformed == true)
    }

    @Test(
        "any DOCTYPE with an internal subset is refused, even an empty one or one with only comments",
        arguments: [
            "<!DOCTYPE a []><a/>",
            "<!DOCTYPE a [ <!-- just a comment --> ]><a/>",
            "<!DOCTYPE a [<!ELEMENT a EMPTY>]><a/>",
            "<!DOCTYPE a [<!ATTLIST a b CDATA \"default\">]><a/>",
            "<!DOCTYPE a SYSTEM \"a.dtd\" [<!ENTITY e \"x\">]><a>&e;</a>",
        ])
    func internalSubsetRefused(text: String) {
        let error = Self.failure(text)
        #expect(error?.reason == .internalSubset)
        #expect(error?.isMalformed == false)
    }

    @Test(
        "the XML declaration is allowed at the start, after a byte-order mark too",
        arguments: [
            "<?xml version=\"1.0\"?><a/>",
            "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a/>",
            "<?xml\tversion=\"1.0\" standalone=\"yes\"?><a/>",
            "<a>no declaration at all</a>",
        ])
    func declarationAllowed(text: String) throws {
        #expect(try Self.read(text).name == "a")
    }

    @Test(
        "processing instructions are refused wherever they are; a broken or misplaced declaration too",
        arguments: [
            "<?name?><a/>",
            "<?xml-stylesheet href=\"a.xsl\"?><a/>",
            "<?xml version=\"1.0\"?><a><?php echo 1 ?></a>",
            "<a/><?b c?>",
            " <?xml version=\"1.0\"?><a/>",
            "<?xml?><a/>",
        ])
    func processingInstructions(text: String) {
        let error = Self.failure(text)
        #expect(error?.message.contains("processing instruction") == true, "\(String(describing: error))")
        #expect(error?.line == 1)
    }

    // MARK: - Limits

    @Test("a document over the size limit is refused before parsing; one at the limit reads")
    func sizeLimit() throws {
        let text = "<a>" + String(repeating: "x", count: 93) + "</a>"  // 100 bytes
        let limits = XMLReader.Limits(maxDocumentSize: 100, maxDepth: 4, maxElements: 4)
        #expect(try Self.read(text, limits: limits).text.count == 93)
        let error = Self.failure(text + " ", limits: limits)
        #expect(error?.reason == .tooLarge(size: 101, limit: 100))
        #expect(error?.line == nil)
    }

    @Test("nesting deeper than the limit is refused at the element that goes too deep; the limit itself reads")
    func depthLimit() throws {
        let limits = XMLReader.Limits(maxDocumentSize: 1 << 20, maxDepth: 3, maxElements: 100)
        #expect(try Self.read("<a><b><c/></b></a>", limits: limits).children.first?.children.first?.name == "c")
        let error = Self.failure("<a>\n<b>\n<c>\n<d/></c></b></a>", limits: limits)
        #expect(error?.reason == .tooDeep(limit: 3))
        #expect(error?.line == 4)
        // The default limit holds against deep input without exhausting the stack.
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(Self.failure(deep)?.reason == .tooDeep(limit: XMLReader.Limits.default.maxDepth))
    }

    @Test("more elements than the limit are refused; the limit itself reads")
    func elementLimit() throws {
        let limits = XMLReader.Limits(maxDocumentSize: 1 << 20, maxDepth: 4, maxElements: 5)
        let five = "<a>" + String(repeating: "<b/>", count: 4) + "</a>"
        #expect(try Self.read(five, limits: limits).children.count == 4)
        let six = "<a>" + String(repeating: "<b/>", count: 5) + "</a>"
        #expect(Self.failure(six, limits: limits)?.reason == .tooManyElements(limit: 5))
    }
}
