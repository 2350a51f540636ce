#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The names in a directory, read with `opendir(3)`.
package enum DirectoryEntries {
    /// The names of the entries of `path` (without `.` and `..`), in the order the file system gives them, or the
    /// reason the directory cannot be read.
    package static func names(in path: String) -> Result<[String], FileError> {
        guard let directory = opendir(path) else { return .failure(.current) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { return .failure(.current) }
                return .success(names)
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
