/// The checks a document passes before Foundation's `XMLParser` reads it. The parser traps on names and text that
/// are not UTF-8, and crashes on a processing instruction without data (`<?name?>`), so such documents are refused
/// first, with a message. Property-list manifests and Avahi service files both go through it; neither format uses
/// processing instructions.
public enum XMLParserInput {
    /// Why a document must not reach the parser.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        case notUTF8
        case processingInstruction

        public var description: String {
            switch self {
            case .notUTF8: return "the file is not valid UTF-8 text"
            case .processingInstruction:
                return "processing instructions (<?…?>) other than the XML declaration are not allowed"
            }
        }
    }

    /// Why `bytes` must not be parsed, or nil when they may be.
    public static func refusal(of bytes: [UInt8]) -> Refusal? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return .notUTF8 }
        return hasProcessingInstruction(bytes) ? .processingInstruction : nil
    }

    /// True when the bytes hold a processing instruction other than a leading XML declaration.
    static func hasProcessingInstruction(_ bytes: [UInt8]) -> Bool {
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "?") {
                let isDeclaration = index == start && bytes.count > index + 5
                    && bytes[(index + 2)..<(index + 5)].elementsEqual("xml".utf8)
                    && [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index + 5])
                if !isDeclaration { return true }
            }
            index += 1
        }
        return false
    }
}
