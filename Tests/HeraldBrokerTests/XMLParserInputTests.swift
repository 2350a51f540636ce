import HeraldBroker
import Testing

@Suite("What may reach Foundation's XMLParser")
struct XMLParserInputTests {
    @Test("a leading XML declaration, with or without a byte-order mark, is allowed", arguments: [
        "<?xml version=\"1.0\"?><plist/>",
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<service-group/>",
        "<?xml\tversion=\"1.0\"?><a/>",
        "<a>no declaration at all</a>",
        "",
    ])
    func declarationAllowed(text: String) {
        #expect(XMLParserInput.refusal(of: Array(text.utf8)) == nil)
    }

    @Test("any other processing instruction is refused, wherever it is", arguments: [
        "<?name?>",
        "<?xml-stylesheet href=\"a.xsl\"?><a/>",
        "<?xml version=\"1.0\"?><a><?php echo 1 ?></a>",
        " <?xml version=\"1.0\"?><a/>",
        "<?xml?>",
        "<a/><?xml version=\"1.0\"?>",
    ])
    func otherInstructionsRefused(text: String) {
        #expect(XMLParserInput.refusal(of: Array(text.utf8)) == .processingInstruction)
    }

    @Test("bytes that are not UTF-8 are refused before anything else")
    func notUTF8Refused() {
        let bytes = Array("<a>".utf8) + [0xC3, 0x28] + Array("</a><?x?>".utf8)
        #expect(XMLParserInput.refusal(of: bytes) == .notUTF8)
        #expect("\(XMLParserInput.Refusal.notUTF8)" == "the file is not valid UTF-8 text")
    }
}
