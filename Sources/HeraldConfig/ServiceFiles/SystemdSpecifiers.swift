extension SystemdDNSSDFile {
    /// The values the specifiers in `Name=` expand to (systemd.dnssd(5), "Specifiers").
    package struct Specifiers: Hashable, Sendable {
        /// `%H`; `%l` is its first label.
        package var hostName: String
        /// `%m`
        package var machineID: String?
        /// `%b`
        package var bootID: String?
        /// `%v`
        package var kernelRelease: String?
        /// `%a`
        package var architecture: String?
        /// The fields of os-release(5), for `%o` (ID), `%w` (VERSION_ID), `%W` (VARIANT_ID), `%B` (BUILD_ID),
        /// `%M` (IMAGE_ID) and `%A` (IMAGE_VERSION); a field the file does not set expands to nothing, as in systemd.
        package var osRelease: [String: String]

        package init(
            hostName: String, machineID: String? = nil, bootID: String? = nil, kernelRelease: String? = nil,
            architecture: String? = nil, osRelease: [String: String] = [:]
        ) {
            self.hostName = hostName
            self.machineID = machineID
            self.bootID = bootID
            self.kernelRelease = kernelRelease
            self.architecture = architecture
            self.osRelease = osRelease
        }

        /// The `KEY=value` lines of an os-release file. Values may be quoted with `"` or `'`; inside double quotes a
        /// backslash keeps the next character (`\"`, `\\`, `\$`, `` \` ``). Comments and other lines are skipped.
        package static func parseOSRelease(_ text: String) -> [String: String] {
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let trimmed = String(line).trimmingWhitespace()
                guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
                let key = String(trimmed[..<equals])
                guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { continue }
                var raw = Substring(trimmed[trimmed.index(after: equals)...])
                var value = ""
                if let quote = raw.first, quote == "\"" || quote == "'", raw.count >= 2, raw.last == quote {
                    raw = raw.dropFirst().dropLast()
                    var escaped = false
                    for character in raw {
                        if quote == "\"" && character == "\\" && !escaped {
                            escaped = true
                            continue
                        }
                        escaped = false
                        value.append(character)
                    }
                } else {
                    value = String(raw)
                }
                fields[key] = value
            }
            return fields
        }
    }

    /// Expands the specifiers of `Name=`: `%a %A %b %B %H %l %m %M %o %v %w %W` and `%%`.
    static func expand(_ text: String, _ specifiers: Specifiers) -> Result<String, ProblemText> {
        var result = ""
        var iterator = text.makeIterator()
        while let c = iterator.next() {
            guard c == "%" else {
                result.append(c)
                continue
            }
            guard let s = iterator.next() else { return .failure(ProblemText("Name= ends with a lone %")) }
            let value: String?
            switch s {
            case "%": value = "%"
            case "a": value = specifiers.architecture
            case "A": value = specifiers.osRelease["IMAGE_VERSION"] ?? ""
            case "b": value = specifiers.bootID
            case "B": value = specifiers.osRelease["BUILD_ID"] ?? ""
            case "H": value = specifiers.hostName
            case "l":
                value =
                    specifiers.hostName.split(separator: ".", maxSplits: 1).first.map(String.init)
                    ?? specifiers.hostName
            case "m": value = specifiers.machineID
            case "M": value = specifiers.osRelease["IMAGE_ID"] ?? ""
            case "o": value = specifiers.osRelease["ID"] ?? ""
            case "v": value = specifiers.kernelRelease
            case "w": value = specifiers.osRelease["VERSION_ID"] ?? ""
            case "W": value = specifiers.osRelease["VARIANT_ID"] ?? ""
            default:
                return .failure(
                    ProblemText("unknown specifier %\(s) in Name= (known: %a %A %b %B %H %l %m %M %o %v %w %W %%)"))
            }
            guard let value else { return .failure(ProblemText("the value of %\(s) is not known on this system")) }
            result += value
        }
        return .success(result)
    }
}
