#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Interface names for the interface indexes the daemon reports.
enum InterfaceNames {
    /// The kernel's name for an index (`eth0`), `any` for 0, `local` for the local-only index, `#7` for
    /// an index that no longer exists.
    static func name(of index: UInt32) -> String {
        if index == 0 { return "any" }
        if index == UInt32.max { return "local" }
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &buffer) != nil else { return "#\(index)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The index of a named interface, or nil.
    static func index(of name: String) -> UInt32? {
        let index = if_nametoindex(name)
        return index == 0 ? nil : index
    }

    /// The longest interface name on the system now (for column widths).
    static func longestName() -> Int {
        guard let list = if_nameindex() else { return 0 }
        defer { if_freenameindex(list) }
        var longest = 0
        var entry = list
        while entry.pointee.if_index != 0, let name = entry.pointee.if_name {
            longest = max(longest, strlen(name))
            entry += 1
        }
        return longest
    }
}
