#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a path names, as `stat(2)` sees it (following symbolic links).
package enum FileKind: Hashable, Sendable {
    case regularFile
    case directory
    /// A device, socket, pipe.
    case other

    /// What `path` names; `.failure` with `ENOENT` when nothing is there.
    package static func of(_ path: String) -> Result<FileKind, FileError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(.current) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.regularFile)
        case S_IFDIR: return .success(.directory)
        default: return .success(.other)
        }
    }

    /// True when something (of any kind) is at `path`.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// True when `path` names a directory.
    package static func isDirectory(_ path: String) -> Bool {
        (try? of(path).get()) == .directory
    }
}
