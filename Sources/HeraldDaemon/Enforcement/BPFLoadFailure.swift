#if canImport(Glibc)
    import Glibc
#endif

/// Why the kernel refused to load a BPF program, in words for the log and `herald status`: the error and the
/// last line of the verifier's log (where it says what it rejected), as `Invalid argument: R1 type=… expected=…`.
enum BPFLoadFailure {
    /// `code` is the errno of the load, read at once; `log` the buffer the verifier wrote into.
    static func describe(code: Int32, log: [CChar]) -> String {
        let verifier =
            String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: "\n").last.map { ": \($0)" } ?? ""
        return String(cString: strerror(code)) + verifier
    }
}
