#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a path names, as `stat(2)` sees it (following symbolic links).
public enum FileKind: Hashable, Sendable {
    case regularFile
    case directory
    /// A device, socket, pipe.
    case other

    /// What `path` names; `.failure` with `ENOENT` when nothing is there.
    public static func of(_ path: String) -> Result<FileKind, FileError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(.current) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.regularFile)
        case S_IFDIR: return .success(.directory)
        default: return .success(.other)
        }
    }

    /// True when something (of any kind) is at `path`.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// True when `path` names a directory.
    public static func isDirectory(_ path: String) -> Bool {
        (try? of(path).get()) == .directory
    }
}
