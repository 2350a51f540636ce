#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Addresses from A/AAAA rdata, in the usual text forms.
enum AddressText {
    /// `10.0.0.1` or `fe80::1`, or nil for rdata of another length.
    static func text(of rdata: [UInt8]) -> String? {
        let family: Int32
        switch rdata.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted = rdata.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard converted != nil else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `IPv4` or `IPv6` for rdata of an address.
    static func family(of rdata: [UInt8]) -> String { rdata.count == 4 ? "IPv4" : "IPv6" }
}
