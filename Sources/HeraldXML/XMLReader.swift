import CExpat

/// Reads a small XML document (a property list, an Avahi service file) into a tree of elements, with libexpat.
///
/// Only what such files need is read, and everything else is refused with an error that names it and its line:
/// - UTF-8 text only (a declaration of another encoding is refused, except an ASCII-compatible one over ASCII text);
/// - no DTD at all: a `<!DOCTYPE name PUBLIC "…" "…">` line is accepted and ignored (real property lists and
///   Avahi files carry one), but a DOCTYPE with an internal subset (`[ … ]`), any entity declaration, a
///   reference to an entity other than XML's five predefined ones, and external entities are refused: nothing is
///   ever expanded or loaded, so neither "billion laughs" nor a `file:///` entity can do anything (libexpat's own
///   amplification limit is a second line, not the first);
/// - no processing instructions other than the XML declaration;
/// - at most `limits` bytes, nesting depth and elements.
package struct XMLReader: Sendable {
    /// The most a document may hold.
    package struct Limits: Hashable, Sendable {
        /// Bytes of the whole document.
        package var maxDocumentSize: Int
        /// Levels of nested elements, the root being level 1.
        package var maxDepth: Int
        /// Elements in the whole document.
        package var maxElements: Int

        package init(maxDocumentSize: Int, maxDepth: Int, maxElements: Int) {
            self.maxDocumentSize = maxDocumentSize
            self.maxDepth = maxDepth
            self.maxElements = maxElements
        }

        /// Generous for configuration files: 1 MiB, 64 levels, 10,000 elements.
        package static let `default` = Limits(maxDocumentSize: 1 << 20, maxDepth: 64, maxElements: 10_000)
    }

    package var limits: Limits

    package init(limits: Limits = .default) {
        self.limits = limits
    }

    /// Reads `bytes` as one XML document and returns its root element.
    package func read(_ bytes: [UInt8]) throws(XMLReadError) -> Element {
        // Checked here, not in libexpat: its length argument is a C int.
        guard bytes.count <= limits.maxDocumentSize, bytes.count <= Int(Int32.max) else {
            throw XMLReadError(.tooLarge(size: bytes.count, limit: limits.maxDocumentSize))
        }
        let isASCII = try Self.validateUTF8(bytes)
        let builder = TreeBuilder(limits: limits, isASCII: isASCII)
        return try builder.parse(bytes)
    }

    /// Throws `notUTF8` with the line of the first byte that is not part of a UTF-8 sequence; returns whether the
    /// text is all ASCII.
    static func validateUTF8(_ bytes: [UInt8]) throws(XMLReadError) -> Bool {
        var line = 1
        var isASCII = true
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 {
                    if encoded.first == UInt8(ascii: "\n") { line += 1 }
                } else {
                    isASCII = false
                }
            case .error:
                throw XMLReadError(.notUTF8, line: line)
            case .emptyInput:
                return isASCII
            }
        }
    }
}

/// Builds the tree from libexpat's callbacks. Used for one document on one thread, then dropped.
private final class TreeBuilder {
    let limits: XMLReader.Limits
    /// The text is all ASCII, so that a declaration of an ASCII-compatible encoding reads it as UTF-8 does.
    let isASCII: Bool
    var parser: OpaquePointer?
    /// The open elements, innermost last.
    var stack: [XMLReader.Element] = []
    var root: XMLReader.Element?
    var elementCount = 0
    /// The run of text being collected for the innermost open element, and the line it starts on.
    var text: [UInt8] = []
    var textLine = 0
    /// The first problem found in a callback; parsing stops there.
    var failure: XMLReadError?

    init(limits: XMLReader.Limits, isASCII: Bool) {
        self.limits = limits
        self.isASCII = isASCII
    }

    /// Encodings whose ASCII range is ASCII: a document declaring one of them and holding only ASCII reads the
    /// same in UTF-8.
    static let asciiCompatibleEncodings: Set<String> = [
        "US-ASCII", "ASCII", "ISO-8859-1", "ISO-8859-15", "ISO_8859-1", "LATIN1", "LATIN-1",
    ]

    func parse(_ bytes: [UInt8]) throws(XMLReadError) -> XMLReader.Element {
        // The encoding given here overrides the document's declaration, so libexpat never decodes anything but
        // UTF-8; the declaration is checked in the XML declaration handler instead.
        guard let parser = XML_ParserCreate("UTF-8") else { throw XMLReadError(.malformed("out of memory")) }
        self.parser = parser
        defer {
            XML_ParserFree(parser)
            self.parser = nil
        }
        // Parameter entities and the external DTD subset are never parsed (libexpat's default, made explicit).
        XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER)
        XML_SetUserData(parser, Unmanaged.passUnretained(self).toOpaque())
        XML_SetElementHandler(
            parser,
            { context, name, attributes in
                TreeBuilder.from(context).start(name, attributes)
            },
            { context, _ in
                TreeBuilder.from(context).end()
            })
        XML_SetCharacterDataHandler(
            parser,
            { context, bytes, count in
                TreeBuilder.from(context).characters(bytes, Int(count))
            })
        XML_SetXmlDeclHandler(
            parser,
            { context, _, encoding, _ in
                TreeBuilder.from(context).declaration(encoding: encoding)
            })
        XML_SetStartDoctypeDeclHandler(
            parser,
            { context, _, _, _, hasInternalSubset in
                if hasInternalSubset != 0 { TreeBuilder.from(context).fail(.internalSubset) }
            })
        XML_SetEntityDeclHandler(
            parser,
            { context, name, _, _, _, _, _, _, _ in
                TreeBuilder.from(context).fail(.entityDeclaration(name.map { String(cString: $0) } ?? ""))
            })
        XML_SetSkippedEntityHandler(
            parser,
            { context, name, _ in
                TreeBuilder.from(context).fail(.undefinedEntity(name.map { String(cString: $0) } ?? ""))
            })
        // Refusing makes libexpat stop with XML_ERROR_EXTERNAL_ENTITY_HANDLING.
        XML_SetExternalEntityRefHandler(parser, { _, _, _, _, _ in Int32(XML_STATUS_ERROR.rawValue) })
        XML_SetProcessingInstructionHandler(
            parser,
            { context, target, _ in
                TreeBuilder.from(context).fail(.processingInstruction(target.map { String(cString: $0) } ?? ""))
            })

        let status = withExtendedLifetime(self) {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    XML_Parse(parser, chars.baseAddress, Int32(chars.count), 1)
                }
            }
        }
        if let failure { throw failure }
        guard status != XML_STATUS_ERROR else { throw expatError(parser) }
        guard let root else { throw XMLReadError(.empty) }
        return root
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> TreeBuilder {
        Unmanaged<TreeBuilder>.fromOpaque(context!).takeUnretainedValue()
    }

    /// The place libexpat is at: 1-based line and column.
    var place: (line: Int, column: Int) {
        guard let parser else { return (1, 1) }
        return (Int(XML_GetCurrentLineNumber(parser)), Int(XML_GetCurrentColumnNumber(parser)) + 1)
    }

    /// Records the first problem and stops the parser (libexpat may still call a handler or two; each returns
    /// at once once there is a failure).
    func fail(_ reason: XMLReadError.Reason) {
        guard failure == nil else { return }
        let (line, column) = place
        failure = XMLReadError(reason, line: line, column: column)
        if let parser { XML_StopParser(parser, XML_Bool(0)) }
    }

    func declaration(encoding: UnsafePointer<CChar>?) {
        guard failure == nil, let encoding else { return }
        let name = String(cString: encoding)
        let upper = name.uppercased()
        if upper == "UTF-8" || upper == "UTF8" { return }
        if isASCII && Self.asciiCompatibleEncodings.contains(upper) { return }
        fail(.unsupportedEncoding(name))
    }

    func start(_ name: UnsafePointer<CChar>?, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard failure == nil, let name else { return }
        flushText()
        guard stack.count < limits.maxDepth else { return fail(.tooDeep(limit: limits.maxDepth)) }
        guard elementCount < limits.maxElements else { return fail(.tooManyElements(limit: limits.maxElements)) }
        elementCount += 1
        var read: [XMLReader.Attribute] = []
        if let attributes {
            var index = 0
            while let attributeName = attributes[index], let value = attributes[index + 1] {
                read.append(XMLReader.Attribute(name: String(cString: attributeName), value: String(cString: value)))
                index += 2
            }
        }
        let (line, column) = place
        stack.append(XMLReader.Element(name: String(cString: name), attributes: read, line: line, column: column))
    }

    func end() {
        guard failure == nil, let element = stack.popLast() else { return }
        var closed = element
        if !text.isEmpty {
            closed.content.append(.text(String(decoding: text, as: UTF8.self), line: textLine))
            text.removeAll(keepingCapacity: true)
        }
        if stack.isEmpty {
            root = closed
        } else {
            stack[stack.count - 1].content.append(.element(closed))
        }
    }

    func characters(_ bytes: UnsafePointer<CChar>?, _ count: Int) {
        guard failure == nil, let bytes, count > 0, !stack.isEmpty else { return }
        if text.isEmpty { textLine = place.line }
        bytes.withMemoryRebound(to: UInt8.self, capacity: count) { start in
            text.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// Ends the run of text of the innermost open element, if one is being collected.
    func flushText() {
        guard !text.isEmpty, !stack.isEmpty else { return }
        stack[stack.count - 1].content.append(.text(String(decoding: text, as: UTF8.self), line: textLine))
        text.removeAll(keepingCapacity: true)
    }

    /// libexpat's own error, in words where the usual ones can be said better.
    func expatError(_ parser: OpaquePointer) -> XMLReadError {
        let code = XML_GetErrorCode(parser)
        let line = Int(XML_GetCurrentLineNumber(parser))
        let column = Int(XML_GetCurrentColumnNumber(parser)) + 1
        let message: String
        switch code {
        case XML_ERROR_NO_ELEMENTS:
            guard let open = stack.last else { return XMLReadError(.empty, line: line, column: column) }
            message = "the document ends before <\(open.name)> (line \(open.line)) is closed"
        case XML_ERROR_TAG_MISMATCH:
            message =
                stack.last.map { "an end tag does not match the start tag <\($0.name)> on line \($0.line)" }
                ?? "an end tag does not match its start tag"
        case XML_ERROR_JUNK_AFTER_DOC_ELEMENT:
            message = "only whitespace and comments may follow the root element (a document has exactly one)"
        case XML_ERROR_UNDEFINED_ENTITY:
            return XMLReadError(
                .malformed(
                    "a reference to an undefined entity (only &lt; &gt; &amp; &quot; &apos; and character references are read)"
                ),
                line: line, column: column)
        case XML_ERROR_EXTERNAL_ENTITY_HANDLING:
            return XMLReadError(.externalEntity, line: line, column: column)
        case XML_ERROR_XML_DECL:
            message = "the XML declaration (the processing instruction <?xml …?>) is not well formed"
        case XML_ERROR_MISPLACED_XML_PI:
            message =
                "an XML declaration (<?xml …?>) is allowed only at the very start, and no other processing instruction"
        default:
            let text = XML_ErrorString(code).map { String(cString: $0) } ?? "libexpat error \(code.rawValue)"
            message = text
        }
        return XMLReadError(.malformed(message), line: line, column: column)
    }
}
