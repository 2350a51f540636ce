/// Path names taken apart and put together as text, as the shell and `dirname(1)` do (nothing is looked up).
package enum PathName {
    /// `name` inside `directory`: `/etc/herald` and `a.conf` make `/etc/herald/a.conf`.
    package static func joined(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The directory part of `path`: `/var/lib/herald` for `/var/lib/herald/permissions.sqlite`, `/` for `/a`, and
    /// `.` for a bare name.
    package static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The last component of `path`: `permissions.sqlite` for `/var/lib/herald/permissions.sqlite`.
    package static func lastComponent(of path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.last.map(String.init) ?? (path.hasPrefix("/") ? "/" : path)
    }
}
