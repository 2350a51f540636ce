import HeraldKit
import Testing

@Suite("TXT attributes follow RFC 6763 §6")
struct TXTDictionaryTests {
    /// TXT record data from strings of bytes.
    func rdata(_ strings: [[UInt8]]) -> [UInt8] {
        strings.flatMap { [UInt8($0.count)] + $0 }
    }

    @Test("keys are found ignoring case, and keep the spelling they were given")
    func caseInsensitiveKeys() {
        var txt: TXTDictionary = ["Path": "/index"]
        #expect(txt["path"] == "/index")
        #expect(txt["PATH"]?.string == "/index")
        txt["PATH"] = "/other"
        #expect(txt.keys == ["Path"])
        #expect(txt["path"] == "/other")
        #expect(txt == ["pAtH": "/other"])
        #expect(txt != ["path": "/index"])
    }

    @Test("a key without '=' is a boolean attribute; 'key=' has an empty value; both count as present")
    func booleanAndEmpty() {
        let txt = TXTDictionary(rdata: rdata([Array("color".utf8), Array("empty=".utf8), Array("n=1".utf8)]))
        #expect(txt["color"] == .flag)
        #expect(txt["empty"] == .data([]))
        #expect(txt.string("empty") == "")
        #expect(txt.contains("color") && txt.contains("EMPTY") && !txt.contains("absent"))
        #expect(txt.string("color") == nil)
        #expect(txt.string("n") == "1")
    }

    @Test("binary values survive a round trip byte for byte, and are not text")
    func binaryValues() throws {
        let bytes = rdata([Array("bin=".utf8) + [0x00, 0xFF, 0x80, 0x3D], Array("utf8=café".utf8), Array("flag".utf8)])
        let txt = TXTDictionary(rdata: bytes)
        #expect(txt["bin"] == .data([0x00, 0xFF, 0x80, 0x3D]))
        #expect(txt.string("bin") == nil)
        #expect(txt.string("utf8") == "café")
        #expect(try txt.rdata() == bytes)
    }

    @Test("only the first occurrence of a key counts; strings with no key before '=' and empty strings are ignored")
    func malformedStrings() {
        let txt = TXTDictionary(
            rdata: rdata([Array("a=1".utf8), Array("A=2".utf8), Array("=orphan".utf8), [], Array("b".utf8)]))
        #expect(txt.keys == ["a", "b"])
        #expect(txt["a"] == "1")
    }

    @Test("a length that runs past the end ends the record without trapping")
    func truncatedRecord() {
        let txt = TXTDictionary(rdata: [3, 0x61, 0x3D, 0x31, 9, 0x62])
        #expect(txt.keys == ["a"])
        #expect(TXTDictionary(rdata: []).isEmpty)
        #expect(TXTDictionary(rdata: [0]).isEmpty)
    }

    @Test("an empty dictionary is written as the single empty string (§6.1)")
    func emptyRecord() throws {
        #expect(try TXTDictionary().rdata() == [0])
    }

    @Test("keys that are empty, contain '=' or non-ASCII, and strings over 255 bytes are refused with a reason")
    func invalidKeys() {
        for bad: TXTDictionary in [
            ["": "x"], ["a=b": "x"], ["clé": "x"], ["tab\t": .flag],
            ["long": .data([UInt8](repeating: 0x41, count: 251))],
        ] {
            #expect(throws: HeraldError.self) { try bad.rdata() }
        }
        let fits: TXTDictionary = ["long": .data([UInt8](repeating: 0x41, count: 250))]
        #expect((try? fits.rdata())?.count == 256)
    }

    @Test("removing an attribute by setting nil; order of the rest is kept")
    func removal() throws {
        var txt: TXTDictionary = ["a": "1", "b": .flag, "c": "3"]
        txt["B"] = nil
        #expect(txt.keys == ["a", "c"])
        #expect(try txt.rdata() == rdata([Array("a=1".utf8), Array("c=3".utf8)]))
    }
}
