import HeraldWire
import HeraldXML

/// An Avahi static service file (avahi.service(5)), as found in `/etc/avahi/services/*.service`:
///
/// ```xml
/// <service-group>
///   <name replace-wildcards="yes">%h SSH</name>
///   <service protocol="any">
///     <type>_ssh._tcp</type>
///     <subtype>_sftp._sub._ssh._tcp</subtype>
///     <domain-name>local</domain-name>
///     <host-name>other.local</host-name>
///     <port>22</port>
///     <txt-record value-format="text">key=value</txt-record>
///   </service>
/// </service-group>
/// ```
///
/// As in Avahi, a service group is published whole or not at all: any error refuses the file. Unknown
/// elements and attributes are warnings. The XML is read by `XMLReader`: a `<!DOCTYPE service-group SYSTEM …>`
/// line is accepted, but DTDs, entities and processing instructions are never read.
package struct AvahiServiceFile: Sendable {
    package var services: [StaticService]
    /// Problems that did not stop the file from being used (unknown elements or attributes).
    package var warnings: [ServiceFileProblem]

    /// The XML reader's limits: an Avahi file is a few hundred bytes; these leave room for large TXT records.
    static let limits = XMLReader.Limits(maxDocumentSize: 256 * 1024, maxDepth: 16, maxElements: 4096)

    /// Parses a file's contents (bytes: `[UInt8]`, `Data`, …). `file` names it in problems; `hostName` replaces
    /// `%h` in a name with `replace-wildcards="yes"`.
    package init(data: some Sequence<UInt8>, file: String, hostName: String) throws(ServiceFileError) {
        var problems: [ServiceFileProblem] = []
        let root: ServiceXMLNode
        do {
            root = ServiceXMLNode(try XMLReader(limits: Self.limits).read(Array(data)))
        } catch {
            let message = error.isMalformed ? "not well-formed XML: \(error.message)" : error.message
            throw ServiceFileError(
                file: file,
                problems: [
                    ServiceFileProblem(file: file, line: error.line, element: nil, message: message)
                ])
        }
        let services = Interpreter(file: file, hostName: hostName).services(in: root, problems: &problems)
        if problems.contains(where: { $0.severity == .error }) {
            throw ServiceFileError(file: file, problems: problems)
        }
        self.services = services
        self.warnings = problems
    }

    package init(contents: String, file: String, hostName: String) throws(ServiceFileError) {
        try self.init(data: contents.utf8, file: file, hostName: hostName)
    }

    /// Replaces `%h` with the host name (the only wildcard Avahi knows).
    package static func replaceWildcards(in text: String, hostName: String) -> String {
        text.replacing("%h", with: hostName)
    }
}

// MARK: - Interpretation

private struct Interpreter {
    var file: String
    var hostName: String

    func problem(_ node: ServiceXMLNode, _ message: String, _ severity: ServiceFileProblem.Severity = .error)
        -> ServiceFileProblem
    {
        ServiceFileProblem(file: file, line: node.line, element: node.path, severity: severity, message: message)
    }

    func unknownAttributes(_ node: ServiceXMLNode, allowed: Set<String>, problems: inout [ServiceFileProblem]) {
        for name in node.attributes.keys.sorted() where !allowed.contains(name) {
            problems.append(problem(node, "unknown attribute \"\(name)\" ignored", .warning))
        }
    }

    func services(in root: ServiceXMLNode, problems: inout [ServiceFileProblem]) -> [StaticService] {
        guard root.name == "service-group" else {
            problems.append(problem(root, "the root element is <\(root.name)>, expected <service-group>"))
            return []
        }
        unknownAttributes(root, allowed: [], problems: &problems)
        var name: String?
        var serviceNodes: [ServiceXMLNode] = []
        var nameSeen = false
        for child in root.children {
            switch child.name {
            case "name":
                if nameSeen {
                    problems.append(problem(child, "<name> given more than once"))
                    continue
                }
                nameSeen = true
                unknownAttributes(child, allowed: ["replace-wildcards"], problems: &problems)
                var text = child.text.trimmingWhitespace()
                switch child.attributes["replace-wildcards"] {
                case nil, "no": break
                case "yes": text = AvahiServiceFile.replaceWildcards(in: text, hostName: hostName)
                case let other?:
                    problems.append(problem(child, "replace-wildcards must be \"yes\" or \"no\", not \"\(other)\""))
                }
                if let message = ServiceFileSupport.validateInstance(text) {
                    problems.append(problem(child, message))
                } else {
                    name = text
                }
            case "service":
                serviceNodes.append(child)
            default:
                problems.append(problem(child, "unknown element <\(child.name)> ignored", .warning))
            }
        }
        if !nameSeen { problems.append(problem(root, "<name> is missing")) }
        if serviceNodes.isEmpty { problems.append(problem(root, "the group has no <service>")) }
        var services: [StaticService] = []
        for node in serviceNodes {
            if let service = self.service(node, name: name ?? "", problems: &problems) {
                services.append(service)
            }
        }
        return name == nil ? [] : services
    }

    func service(_ node: ServiceXMLNode, name: String, problems: inout [ServiceFileProblem]) -> StaticService? {
        let errorsBefore = problems.filter { $0.severity == .error }.count
        unknownAttributes(node, allowed: ["protocol"], problems: &problems)
        var proto = StaticServiceProtocol.any
        if let text = node.attributes["protocol"] {
            if let value = StaticServiceProtocol(rawValue: text) {
                proto = value
            } else {
                problems.append(problem(node, "protocol must be \"ipv4\", \"ipv6\" or \"any\", not \"\(text)\""))
            }
        }
        var typeNode: ServiceXMLNode?
        var portNode: ServiceXMLNode?
        var domainNode: ServiceXMLNode?
        var hostNode: ServiceXMLNode?
        var subtypeNodes: [ServiceXMLNode] = []
        var txtNodes: [ServiceXMLNode] = []
        for child in node.children {
            func single(_ slot: inout ServiceXMLNode?) {
                if slot != nil {
                    problems.append(problem(child, "<\(child.name)> given more than once"))
                } else {
                    slot = child
                }
                unknownAttributes(child, allowed: [], problems: &problems)
            }
            switch child.name {
            case "type": single(&typeNode)
            case "port": single(&portNode)
            case "domain-name": single(&domainNode)
            case "host-name": single(&hostNode)
            case "subtype":
                unknownAttributes(child, allowed: [], problems: &problems)
                subtypeNodes.append(child)
            case "txt-record":
                unknownAttributes(child, allowed: ["value-format"], problems: &problems)
                txtNodes.append(child)
            default:
                problems.append(problem(child, "unknown element <\(child.name)> ignored", .warning))
            }
        }

        var type: ServiceType?
        if let typeNode {
            let text = typeNode.text.trimmingWhitespace()
            do {
                let parsed = try ServiceType(text)
                if parsed.hasSubtype {
                    problems.append(problem(typeNode, "the type \"\(text)\" has a subtype; give subtypes in <subtype>"))
                } else {
                    type = parsed
                    for warning in parsed.registrationWarnings {
                        problems.append(problem(typeNode, warning.description, .warning))
                    }
                }
            } catch {
                problems.append(problem(typeNode, "bad service type \"\(text)\": \(error)"))
            }
        } else {
            problems.append(problem(node, "<type> is missing"))
        }
        if let domainNode, let base = type {
            let text = domainNode.text.trimmingWhitespace()
            do {
                type = try base.inDomain(try DNSName(text))
            } catch {
                problems.append(problem(domainNode, "bad domain name \"\(text)\": \(error)"))
            }
        }
        // The instance and the type (with its domain) must make a name that fits in 255 bytes.
        if let type, !name.isEmpty, (try? ServiceInstanceName(instance: name, type: type)) == nil {
            problems.append(
                problem(
                    typeNode ?? node,
                    "the service name \"\(name)\" and the type \(type) make a name longer than 255 bytes"))
        }
        var host: DNSName?
        if let hostNode {
            let text = hostNode.text.trimmingWhitespace()
            do {
                let parsed = try DNSName(text)
                if parsed.isRoot { throw ProblemText("empty") }
                host = parsed
            } catch {
                problems.append(problem(hostNode, "bad host name \"\(text)\""))
            }
        }
        var port: UInt16?
        if let portNode {
            let text = portNode.text.trimmingWhitespace()
            if let value = UInt16(text) {
                port = value
            } else {
                problems.append(problem(portNode, "the port \"\(text)\" is not a number from 0 to 65535"))
            }
        } else {
            problems.append(problem(node, "<port> is missing"))
        }
        var subtypes: [String] = []
        if let type {
            for subtypeNode in subtypeNodes {
                switch ServiceFileSupport.subtypeLabel(subtypeNode.text, of: type) {
                case .success(let label): subtypes.append(label)
                case .failure(let failure): problems.append(problem(subtypeNode, failure.text))
                }
            }
        }
        var entries: [TXTEntry] = []
        var entryNodes: [ServiceXMLNode] = []
        for txtNode in txtNodes {
            if let entry = self.txtEntry(txtNode, problems: &problems) {
                entries.append(entry)
                entryNodes.append(txtNode)
            }
        }
        var txt = TXTRecord.empty
        if !entries.isEmpty {
            do {
                txt = try TXTRecord(entries: entries)
            } catch {
                // Find the entry at fault for the location.
                var culprit = node
                if case .duplicateKey(let key) = error,
                    let index = entries.indices.dropFirst().first(where: { i in
                        entries[..<i].contains { $0.key.lowercased() == key.lowercased() }
                            && entries[i].key.lowercased() == key.lowercased()
                    })
                {
                    culprit = entryNodes[index]
                } else if case .stringTooLong = error,
                    let index = entries.firstIndex(where: { $0.key.utf8.count + 1 + ($0.value?.count ?? 0) > 255 })
                {
                    culprit = entryNodes[index]
                }
                problems.append(problem(culprit, "bad TXT record: \(error)"))
            }
        }
        let errorsAfter = problems.filter { $0.severity == .error }.count
        guard errorsAfter == errorsBefore, let type, let port else { return nil }
        return StaticService(
            name: name, type: type, subtypes: subtypes, host: host, port: port,
            txtRecords: [txt], protocol: proto, file: file)
    }

    func txtEntry(_ node: ServiceXMLNode, problems: inout [ServiceFileProblem]) -> TXTEntry? {
        // The text is used exactly as written (no trimming): TXT values may hold spaces.
        let text = node.text
        let format = node.attributes["value-format"] ?? "text"
        let key: String
        let valueText: String?
        if let equals = text.firstIndex(of: "=") {
            key = String(text[..<equals])
            valueText = String(text[text.index(after: equals)...])
        } else {
            key = text
            valueText = nil
        }
        do {
            try TXTRecord.validate(key: key)
        } catch {
            problems.append(problem(node, "bad TXT key \"\(key)\": \(error)"))
            return nil
        }
        guard let valueText else {
            if format != "text" && format != "binary-hex" && format != "binary-base64" {
                problems.append(problem(node, "unknown value-format \"\(format)\""))
                return nil
            }
            return TXTEntry(key: key, value: nil)
        }
        switch format {
        case "text":
            return TXTEntry(key: key, value: Array(valueText.utf8))
        case "binary-hex":
            guard let bytes = ServiceFileSupport.decodeHex(valueText.trimmingWhitespace()) else {
                problems.append(problem(node, "the value of \"\(key)\" is not valid hexadecimal"))
                return nil
            }
            return TXTEntry(key: key, value: bytes)
        case "binary-base64":
            guard let bytes = ServiceFileSupport.decodeBase64(valueText.trimmingWhitespace()) else {
                problems.append(problem(node, "the value of \"\(key)\" is not valid base64"))
                return nil
            }
            return TXTEntry(key: key, value: bytes)
        default:
            problems.append(
                problem(node, "unknown value-format \"\(format)\" (expected text, binary-hex or binary-base64)"))
            return nil
        }
    }
}

// MARK: - The element tree, with paths

/// An element of the file with its path for problems (`/service-group/service[2]/type`).
struct ServiceXMLNode {
    let name: String
    let attributes: [String: String]
    let line: Int
    let path: String
    let text: String
    let children: [ServiceXMLNode]

    init(_ element: XMLReader.Element, parentPath: String = "", step: String? = nil) {
        name = element.name
        attributes = Dictionary(element.attributes.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        line = element.line
        path = parentPath + "/" + (step ?? element.name)
        text = element.text
        // Repeated elements are numbered from the second on: `service`, `service[2]`, …
        var counts: [String: Int] = [:]
        var children: [ServiceXMLNode] = []
        for child in element.children {
            let count = (counts[child.name] ?? 0) + 1
            counts[child.name] = count
            children.append(
                ServiceXMLNode(child, parentPath: path, step: count == 1 ? child.name : "\(child.name)[\(count)]"))
        }
        self.children = children
    }
}
