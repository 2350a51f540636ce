/// Why a document could not be read, with the place when there is one.
package struct XMLReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is, so that a caller can word the ones it cares about itself.
    package enum Reason: Hashable, Sendable {
        /// The bytes are not UTF-8 (the only encoding read).
        case notUTF8
        /// The XML declaration names an encoding other than UTF-8 (or ASCII-compatible with ASCII-only text).
        case unsupportedEncoding(String)
        /// The document is larger than `Limits.maxDocumentSize` bytes.
        case tooLarge(size: Int, limit: Int)
        /// Elements nest deeper than `Limits.maxDepth`.
        case tooDeep(limit: Int)
        /// The document has more than `Limits.maxElements` elements.
        case tooManyElements(limit: Int)
        /// A DOCTYPE declaration with an internal subset (`[ … ]`), where entities would be declared.
        case internalSubset
        /// An entity declaration (never read).
        case entityDeclaration(String)
        /// A reference to an entity that is not one of XML's five predefined ones.
        case undefinedEntity(String)
        /// A reference to an external entity, which is never loaded.
        case externalEntity
        /// A processing instruction other than the XML declaration; carries its target.
        case processingInstruction(String)
        /// No element at all: an empty document, or one of only whitespace and comments.
        case empty
        /// Not well-formed XML; the message says how.
        case malformed(String)
    }

    package var reason: Reason
    /// 1-based line of the problem, when known.
    package var line: Int?
    /// 1-based column (in characters, as libexpat counts) of the problem, when known.
    package var column: Int?

    package init(_ reason: Reason, line: Int? = nil, column: Int? = nil) {
        self.reason = reason
        self.line = line
        self.column = column
    }

    /// True for the reasons that mean "this is not well-formed XML" (rather than "this XML uses something refused").
    package var isMalformed: Bool {
        switch reason {
        case .notUTF8, .empty, .malformed: return true
        default: return false
        }
    }

    /// What is wrong, in words, without the place.
    package var message: String {
        switch reason {
        case .notUTF8:
            return "the file is not valid UTF-8 text"
        case .unsupportedEncoding(let name):
            return "the XML declaration names the encoding \"\(XMLReadError.shortened(name))\"; only UTF-8 is read"
        case .tooLarge(let size, let limit):
            return "the document has \(size) bytes; at most \(limit) are read"
        case .tooDeep(let limit):
            return "elements are nested more than \(limit) levels deep"
        case .tooManyElements(let limit):
            return "the document has more than \(limit) elements"
        case .internalSubset:
            return "a DOCTYPE with an internal subset ([…]) is not allowed: DTDs and entity declarations are never read"
        case .entityDeclaration(let name):
            return "the entity declaration \(XMLReadError.shortened(name)) is not allowed: entities are never read"
        case .undefinedEntity(let name):
            return
                "the entity &\(XMLReadError.shortened(name)); is not defined (only &lt; &gt; &amp; &quot; &apos; and character references are read)"
        case .externalEntity:
            return "external entities are never read"
        case .processingInstruction(let target):
            return
                "processing instructions (<?…?>) other than the XML declaration are not allowed (found <?\(XMLReadError.shortened(target))…?>)"
        case .empty:
            return "the document is empty: it holds no element"
        case .malformed(let text):
            return text
        }
    }

    package var description: String {
        switch (line, column) {
        case (let line?, let column?): return "line \(line), column \(column): \(message)"
        case (let line?, nil): return "line \(line): \(message)"
        default: return message
        }
    }

    /// `text` cut to 40 characters, for names that come from the document.
    static func shortened(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
