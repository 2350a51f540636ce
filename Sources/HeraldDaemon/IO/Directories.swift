#if canImport(Glibc)
    import Glibc
#endif

/// Making directories the way `mkdir -p` does, for the daemon's sockets and its state directory.
enum Directories {
    /// Makes `path` with `mode` and its missing parents with `parentMode` (both less the umask); a directory that
    /// exists already is left as it is.
    static func make(_ path: String, mode: mode_t, parentMode: mode_t) throws(SystemError) {
        let components = path.split(separator: "/")
        var current = path.hasPrefix("/") ? "" : "."
        for (position, component) in components.enumerated() {
            current += "/" + component
            if mkdir(current, position == components.count - 1 ? mode : parentMode) != 0 && errno != EEXIST {
                throw SystemError("mkdir(\(current))")
            }
        }
    }
}
