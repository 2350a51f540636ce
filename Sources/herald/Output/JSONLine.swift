#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes one JSON object per line (keys sorted, so that lines diff well), for `--json`.
enum JSONLine {
    static func print(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        StandardOutput.jsonLine(String(decoding: data, as: UTF8.self))
    }
}
