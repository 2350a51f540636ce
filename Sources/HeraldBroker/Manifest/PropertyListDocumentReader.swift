import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A strict reader for XML property lists (Apple's `PropertyList-1.0` DTD), so that iOS developers can reuse
/// their Info.plist entries as a manifest.
///
/// Foundation's `PropertyListSerialization` works on Linux but merges duplicate keys and blurs booleans into
/// numbers; this reader keeps both visible to the validator. Only the XML form is read: `<plist>` holding one
/// value, with `<dict>` (alternating `<key>` and value), `<array>`, `<string>`, `<integer>`, `<real>`,
/// `<true/>`, `<false/>`, `<date>` and `<data>`. Anything else is a syntax error with its line.
public enum PropertyListDocumentReader {
    /// Reads an XML property list.
    public static func read(_ bytes: [UInt8]) throws(ManifestSyntaxError) -> ManifestDocument {
        if let refusal = XMLParserInput.refusal(of: bytes) {
            throw ManifestSyntaxError(message: refusal == .notUTF8 ? "\(refusal)" : "property list: \(refusal)")
        }
        let builder = Builder()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        let parsed = parser.parse()
        if let problem = builder.problem { throw problem }
        guard parsed, parser.parserError == nil else {
            let reason = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "malformed XML"
            throw ManifestSyntaxError(line: parser.lineNumber, message: "XML: " + reason)
        }
        guard let root = builder.root else {
            throw ManifestSyntaxError(message: "property list: the <plist> element holds no value")
        }
        return root
    }

    /// Builds the value tree from parser events. Used by one parser on one thread, then dropped.
    private final class Builder: NSObject, XMLParserDelegate {
        /// An element being read.
        enum Frame {
            case plist(value: ManifestDocument?)
            case dict(entries: [ManifestDocument.Entry], pendingKey: (String, Int)?)
            case array([ManifestDocument])
            case key(String)
            case text(element: String, text: String)
            case empty(element: String)

            /// The XML element the frame stands for.
            var element: String {
                switch self {
                case .plist: return "plist"
                case .dict: return "dict"
                case .array: return "array"
                case .key: return "key"
                case .text(let element, _), .empty(let element): return element
                }
            }
        }

        static let maxDepth = JSONDocumentReader.maxDepth
        var stack: [Frame] = []
        var root: ManifestDocument?
        var problem: ManifestSyntaxError?
        var sawPlist = false

        func fail(_ parser: XMLParser, _ message: String, abort: Bool = true) {
            if problem == nil {
                problem = ManifestSyntaxError(line: parser.lineNumber, message: "property list: " + message)
            }
            if abort { parser.abortParsing() }
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            guard problem == nil else { return }
            if stack.count > Self.maxDepth { return fail(parser, "values are nested too deeply") }
            guard let top = stack.last else {
                guard name == "plist", !sawPlist else {
                    return fail(parser, "the document must be a single <plist> element, not <\(name)>")
                }
                sawPlist = true
                stack.append(.plist(value: nil))
                return
            }
            switch top {
            case .plist(let value):
                if value != nil { return fail(parser, "<plist> must hold exactly one value; found a second <\(name)>") }
            case .dict(_, let pendingKey):
                if pendingKey == nil && name != "key" {
                    return fail(parser, "inside <dict>, expected <key> but found <\(name)>")
                }
                if pendingKey != nil && name == "key" {
                    return fail(parser, "<key>\(pendingKey!.0)</key> has no value before the next <key>")
                }
            case .array:
                if name == "key" { return fail(parser, "<key> is allowed only inside <dict>") }
            case .key, .text, .empty:
                return fail(parser, "<\(name)> is not allowed inside another value's element")
            }
            switch name {
            case "dict": stack.append(.dict(entries: [], pendingKey: nil))
            case "array": stack.append(.array([]))
            case "key": stack.append(.key(""))
            case "string", "integer", "real", "date", "data": stack.append(.text(element: name, text: ""))
            case "true", "false": stack.append(.empty(element: name))
            default: fail(parser, "<\(name)> is not a property-list element")
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard problem == nil else { return }
            switch stack.last {
            case .text(let element, let text):
                stack[stack.count - 1] = .text(element: element, text: text + string)
            case .key(let text):
                stack[stack.count - 1] = .key(text + string)
            case .empty(let element):
                if !isBlank(string) { fail(parser, "<\(element)/> must be empty") }
            default:
                if !isBlank(string) {
                    let shown = string.trimmingCharacters(in: .whitespacesAndNewlines)
                    fail(parser, "text \(ManifestDocument.quoted(shown)) outside any value element")
                }
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred error: any Error) {
            let code = (error as NSError).code
            let known: [Int: String] = [
                XMLParser.ErrorCode.prematureDocumentEndError.rawValue:
                    "the document ends before all elements are closed",
                XMLParser.ErrorCode.tagNameMismatchError.rawValue: "an end tag does not match its start tag",
                XMLParser.ErrorCode.emptyDocumentError.rawValue: "the document is empty",
            ]
            // The parser stops by itself after a fatal error; aborting it from this callback as well can crash
            // libxml2 (it does for a declaration of an unsupported encoding followed by a byte it cannot decode).
            fail(parser, "the XML is not well formed: " + (known[code] ?? "XMLParser error \(code)"), abort: false)
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            self.parser(parser, foundCharacters: String(decoding: block, as: UTF8.self))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard problem == nil, let top = stack.popLast() else { return }
            guard top.element == name else {
                return fail(parser, "</\(name)> closes <\(top.element)>: the XML is not well formed")
            }
            let value: ManifestDocument
            switch top {
            case .plist(let inner):
                root = inner
                return
            case .key(let text):
                guard case .dict(let entries, nil) = stack.last else { return fail(parser, "misplaced <key>") }
                stack[stack.count - 1] = .dict(entries: entries, pendingKey: (text, parser.lineNumber))
                return
            case .dict(let entries, let pendingKey):
                if let pendingKey { return fail(parser, "<key>\(pendingKey.0)</key> has no value") }
                value = .object(entries)
            case .array(let items):
                value = .array(items)
            case .empty(let element):
                value = .bool(element == "true")
            case .text(let element, let text):
                switch element {
                case "string":
                    value = .string(text)
                case "integer":
                    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    guard Int64(trimmed) != nil else {
                        return fail(parser, "<integer>\(trimmed)</integer> is not a whole number")
                    }
                    value = .number(trimmed)
                case "real":
                    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    guard Double(trimmed) != nil else { return fail(parser, "<real>\(trimmed)</real> is not a number") }
                    value = .number(trimmed)
                default:
                    value = .other(element)
                }
            }
            attach(value, parser)
        }

        func attach(_ value: ManifestDocument, _ parser: XMLParser) {
            switch stack.last {
            case .plist:
                stack[stack.count - 1] = .plist(value: value)
            case .array(let items):
                stack[stack.count - 1] = .array(items + [value])
            case .dict(let entries, let pendingKey?):
                stack[stack.count - 1] = .dict(
                    entries: entries + [.init(key: pendingKey.0, value: value, line: pendingKey.1)], pendingKey: nil)
            default:
                fail(parser, "a value outside <plist>")
            }
        }

        func isBlank(_ text: String) -> Bool {
            text.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        }
    }
}
