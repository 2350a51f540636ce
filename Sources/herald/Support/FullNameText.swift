import HeraldWire

/// Full names as herald prints them.
enum FullNameText {
    /// heraldd hands out full names as the DNS-SD C API does, with spaces written `\032`; herald prints them with
    /// plain spaces (dots and backslashes inside a label stay escaped, so the name still reads unambiguously).
    static func readable(_ fullName: String) -> String {
        (try? DNSName(fullName))?.description ?? fullName
    }
}
