extension XMLReader {
    /// An element as read: its name, attributes and content (child elements and text, in document order), with the
    /// place of its start tag.
    package struct Element: Hashable, Sendable {
        /// The name as written (namespaces are not processed: `a:b` stays `a:b`).
        package var name: String
        /// The attributes in the order written (XML forbids a name twice, so names are unique).
        package var attributes: [Attribute]
        /// Child elements and runs of text, in document order. Adjacent character data, CDATA sections and
        /// references are one run; comments are left out.
        package var content: [Content]
        /// 1-based line of the start tag.
        package var line: Int
        /// 1-based column (in characters, as libexpat counts) of the start tag's `<`.
        package var column: Int

        package init(name: String, attributes: [Attribute] = [], content: [Content] = [], line: Int, column: Int = 1) {
            self.name = name
            self.attributes = attributes
            self.content = content
            self.line = line
            self.column = column
        }

        /// The child elements, in document order.
        package var children: [Element] {
            content.compactMap {
                if case .element(let element) = $0 { return element }
                return nil
            }
        }

        /// The element's own text (not that of its children), all runs joined.
        package var text: String {
            var joined = ""
            for case .text(let run, _) in content { joined += run }
            return joined
        }

        /// The value of the attribute `name`, or nil when it is not given.
        package func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    /// One attribute of an element, its value with references replaced and whitespace normalised as XML says.
    package struct Attribute: Hashable, Sendable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One piece of an element's content.
    package enum Content: Hashable, Sendable {
        case element(Element)
        /// A run of text and the 1-based line it starts on.
        case text(String, line: Int)
    }
}
