import Foundation

/// The two forms a manifest file may take.
public enum ManifestFormat: String, Hashable, Sendable, CaseIterable {
    case json
    /// An XML property list with the same keys (so Info.plist entries can be reused).
    case propertyList = "plist"
}

/// Reads a manifest file (JSON or XML property list) and validates it: the one way into a ``Manifest``.
public enum ManifestParser {
    /// Manifests are small; a larger file is refused before it is parsed.
    public static let maxFileSize = 256 * 1024

    /// The format of a file from its first significant character: `{` (or `[`, `"`) for JSON, `<` for a
    /// property list.
    public static func detectFormat(_ bytes: [UInt8]) -> ManifestFormat? {
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
    public static func parse(_ bytes: [UInt8], format: ManifestFormat? = nil)
    throws(ManifestError) -> ValidatedManifest {
        try ManifestValidator.validate(document(bytes, format: format))
    }

    /// Reads and validates the manifest file at `path`.
    public static func parse(contentsOf path: String) throws(ManifestError) -> ValidatedManifest {
        let bytes: [UInt8]
        do {
            let url = URL(fileURLWithPath: path)
            let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            if size > maxFileSize { throw tooLarge(size) }
            bytes = Array(try Data(contentsOf: url))
        } catch let error as ManifestError {
            throw error
        } catch {
            throw ManifestError(problems: [ManifestProblem(
                field: "", value: ManifestDocument.quoted(path), rule: .unreadable,
                message: "cannot read the file: \((error as NSError).localizedDescription)")])
        }
        let format: ManifestFormat? = path.hasSuffix(".plist") ? .propertyList : path.hasSuffix(".json") ? .json : nil
        return try parse(bytes, format: format ?? detectFormat(bytes))
    }

    /// Reads the document tree of a manifest without validating it.
    public static func document(_ bytes: [UInt8], format: ManifestFormat? = nil)
    throws(ManifestError) -> ManifestDocument {
        if bytes.count > maxFileSize { throw tooLarge(bytes.count) }
        guard let format = format ?? detectFormat(bytes) else {
            throw ManifestError(problems: [ManifestProblem(
                field: "", value: nil, rule: .syntax,
                message: "the file is neither JSON (starting with '{') nor an XML property list (starting with '<')")])
        }
        do {
            switch format {
            case .json: return try JSONDocumentReader.read(bytes)
            case .propertyList: return try PropertyListDocumentReader.read(bytes)
            }
        } catch {
            throw ManifestError(problems: [ManifestProblem(field: "", value: nil, rule: .syntax,
                                                           message: error.description)])
        }
    }

    private static func tooLarge(_ size: Int) -> ManifestError {
        ManifestError(problems: [ManifestProblem(
            field: "", value: nil, rule: .tooLarge,
            message: "the file has \(size) bytes; a manifest may have at most \(maxFileSize)")])
    }
}
