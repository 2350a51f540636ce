#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The two forms a manifest file may take.
package enum ManifestFormat: String, Hashable, Sendable, CaseIterable {
    case json
    /// An XML property list with the same keys (so Info.plist entries can be reused).
    case propertyList = "plist"
}

/// Reads a manifest file (JSON or XML property list) and validates it: the one way into a ``Manifest``.
package enum ManifestParser {
    /// Manifests are small; a larger file is refused before it is parsed.
    package static let maxFileSize = 256 * 1024

    /// The format of a file from its first significant character: `{` (or `[`, `"`) for JSON, `<` for a
    /// property list.
    package static func detectFormat(_ bytes: [UInt8]) -> ManifestFormat? {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        let whitespace: [UInt8] = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        let first = rest.first { !whitespace.contains($0) }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""): return .json
        case UInt8(ascii: "<"): return .propertyList
        default: return nil
        }
    }

    /// Parses and validates a manifest. The format is detected unless given.
    package static func parse(_ bytes: [UInt8], format: ManifestFormat? = nil)
        throws(ManifestError) -> ValidatedManifest
    {
        try ManifestValidator.validate(document(bytes, format: format))
    }

    /// Reads and validates the manifest file at `path`.
    package static func parse(contentsOf path: String) throws(ManifestError) -> ValidatedManifest {
        let bytes = try readFile(path)
        let format: ManifestFormat? = path.hasSuffix(".plist") ? .propertyList : path.hasSuffix(".json") ? .json : nil
        return try parse(bytes, format: format ?? detectFormat(bytes))
    }

    /// Reads the document tree of a manifest without validating it.
    package static func document(_ bytes: [UInt8], format: ManifestFormat? = nil)
        throws(ManifestError) -> ManifestDocument
    {
        if bytes.count > maxFileSize { throw tooLarge(bytes.count) }
        guard let format = format ?? detectFormat(bytes) else {
            throw ManifestError(problems: [
                ManifestProblem(
                    field: "", value: nil, rule: .syntax,
                    message: "the file is neither JSON (starting with '{') nor an XML property list (starting with '<')"
                )
            ])
        }
        do {
            switch format {
            case .json: return try JSONDocumentReader.read(bytes)
            case .propertyList: return try PropertyListDocumentReader.read(bytes)
            }
        } catch {
            throw ManifestError(problems: [
                ManifestProblem(
                    field: "", value: nil, rule: .syntax,
                    message: error.description)
            ])
        }
    }

    /// The bytes of the file at `path`; a file larger than `maxFileSize` is refused without reading it all.
    private static func readFile(_ path: String) throws(ManifestError) -> [UInt8] {
        func unreadable(_ code: Int32) -> ManifestError {
            ManifestError(problems: [
                ManifestProblem(
                    field: "", value: ManifestDocument.quoted(path), rule: .unreadable,
                    message: "cannot read the file: \(String(cString: strerror(code)))")
            ])
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw unreadable(errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw unreadable(errno) }
        if Int(status.st_size) > maxFileSize { throw tooLarge(Int(status.st_size)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw unreadable(errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            // A file that grew since, or reports no size (as in /proc), is refused once it passes the limit.
            if bytes.count > maxFileSize { throw tooLarge(bytes.count, orMore: true) }
        }
    }

    private static func tooLarge(_ size: Int, orMore: Bool = false) -> ManifestError {
        ManifestError(problems: [
            ManifestProblem(
                field: "", value: nil, rule: .tooLarge,
                message:
                    "the file has \(size)\(orMore ? " or more" : "") bytes; a manifest may have at most \(maxFileSize)")
        ])
    }
}
