import HeraldXML

/// A strict reader for XML property lists (Apple's `PropertyList-1.0` DTD), so that iOS developers can reuse
/// their Info.plist entries as a manifest.
///
/// Apple's readers merge duplicate keys and blur booleans into numbers; this reader keeps both visible to the
/// validator. Only the XML form is read: `<plist>` holding one value, with `<dict>` (alternating `<key>` and
/// value), `<array>`, `<string>`, `<integer>`, `<real>`, `<true/>`, `<false/>`, `<date>` and `<data>`. Anything
/// else is a syntax error with its line. The XML itself is read by `XMLReader` (no DTD, entities or processing
/// instructions; the usual `<!DOCTYPE plist PUBLIC …>` line is accepted).
package enum PropertyListDocumentReader {
    /// How deep values may nest, as in JSON manifests.
    static let maxDepth = JSONDocumentReader.maxDepth

    /// The XML reader's limits: the manifest size, `<plist>` plus `maxDepth` levels of values, and as many
    /// elements as the size allows.
    static let limits = XMLReader.Limits(
        maxDocumentSize: ManifestParser.maxFileSize, maxDepth: maxDepth + 1,
        maxElements: ManifestParser.maxFileSize / 4)

    /// Reads an XML property list.
    package static func read(_ bytes: [UInt8]) throws(ManifestSyntaxError) -> ManifestDocument {
        let root: XMLReader.Element
        do {
            root = try XMLReader(limits: limits).read(bytes)
        } catch {
            throw syntaxError(error)
        }
        guard root.name == "plist" else {
            throw problem(root.line, "the document must be a single <plist> element, not <\(root.name)>")
        }
        var value: ManifestDocument?
        for item in root.content {
            switch item {
            case .text(let text, let line):
                try requireBlank(text, line: line)
            case .element(let element):
                if value != nil {
                    throw problem(element.line, "<plist> must hold exactly one value; found a second <\(element.name)>")
                }
                value = try self.value(element)
            }
        }
        guard let value else { throw ManifestSyntaxError(message: "property list: the <plist> element holds no value") }
        return value
    }

    /// The value an element inside `<plist>`, `<array>` or `<dict>` stands for.
    private static func value(_ element: XMLReader.Element) throws(ManifestSyntaxError) -> ManifestDocument {
        switch element.name {
        case "dict":
            return try dictionary(element)
        case "array":
            var items: [ManifestDocument] = []
            for item in element.content {
                switch item {
                case .text(let text, let line):
                    try requireBlank(text, line: line)
                case .element(let child):
                    if child.name == "key" { throw problem(child.line, "<key> is allowed only inside <dict>") }
                    items.append(try value(child))
                }
            }
            return .array(items)
        case "string", "integer", "real", "date", "data":
            let text = try leafText(element)
            switch element.name {
            case "string":
                return .string(text)
            case "integer":
                let trimmed = trimmed(text)
                guard Int64(trimmed) != nil else {
                    throw problem(element.line, "<integer>\(trimmed)</integer> is not a whole number")
                }
                return .number(trimmed)
            case "real":
                let trimmed = trimmed(text)
                guard Double(trimmed) != nil else {
                    throw problem(element.line, "<real>\(trimmed)</real> is not a number")
                }
                return .number(trimmed)
            default:
                return .other(element.name)
            }
        case "true", "false":
            for item in element.content {
                switch item {
                case .text(let text, let line):
                    if !isBlank(text) { throw problem(line, "<\(element.name)/> must be empty") }
                case .element(let child):
                    throw problem(child.line, "<\(child.name)> is not allowed inside another value's element")
                }
            }
            return .bool(element.name == "true")
        default:
            throw problem(element.line, "<\(element.name)> is not a property-list element")
        }
    }

    /// A `<dict>`: keys and values alternating, duplicates kept in file order.
    private static func dictionary(_ element: XMLReader.Element) throws(ManifestSyntaxError) -> ManifestDocument {
        var entries: [ManifestDocument.Entry] = []
        var pendingKey: (text: String, line: Int)?
        for item in element.content {
            switch item {
            case .text(let text, let line):
                try requireBlank(text, line: line)
            case .element(let child):
                if let key = pendingKey {
                    if child.name == "key" {
                        throw problem(child.line, "<key>\(key.text)</key> has no value before the next <key>")
                    }
                    entries.append(.init(key: key.text, value: try value(child), line: key.line))
                    pendingKey = nil
                } else {
                    guard child.name == "key" else {
                        throw problem(child.line, "inside <dict>, expected <key> but found <\(child.name)>")
                    }
                    pendingKey = (try leafText(child), child.line)
                }
            }
        }
        if let key = pendingKey { throw problem(key.line, "<key>\(key.text)</key> has no value") }
        return .object(entries)
    }

    /// The text of an element that holds text only (`<key>`, `<string>` …).
    private static func leafText(_ element: XMLReader.Element) throws(ManifestSyntaxError) -> String {
        if let child = element.children.first {
            throw problem(child.line, "<\(child.name)> is not allowed inside another value's element")
        }
        return element.text
    }

    /// Text between elements must be whitespace.
    private static func requireBlank(_ text: String, line: Int) throws(ManifestSyntaxError) {
        guard isBlank(text) else {
            throw problem(line, "text \(ManifestDocument.quoted(trimmed(text))) outside any value element")
        }
    }

    private static func problem(_ line: Int, _ message: String) -> ManifestSyntaxError {
        ManifestSyntaxError(line: line, message: "property list: " + message)
    }

    /// The XML reader's refusal, worded for a manifest.
    private static func syntaxError(_ error: XMLReadError) -> ManifestSyntaxError {
        let message: String
        switch error.reason {
        case .notUTF8: message = error.message
        case .tooDeep: message = "property list: values are nested more than \(maxDepth) levels deep"
        default:
            message =
                (error.isMalformed ? "property list: the XML is not well formed: " : "property list: ") + error.message
        }
        // The line only: a manifest's columns count bytes, libexpat's characters.
        return ManifestSyntaxError(line: error.line, message: message)
    }

    /// XML's whitespace only (space, tab, line feed, carriage return).
    private static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    }

    /// `text` without whitespace and line breaks at either end.
    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
