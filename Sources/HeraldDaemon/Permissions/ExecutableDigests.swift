import CHeraldSystem
import HeraldBroker

#if canImport(Glibc)
    import Glibc
#endif

/// The SHA-256 of executables whose path a manifest pins, computed once per file and never on the loop's time in
/// one piece: a file is read and hashed a chunk per turn of the event loop, so that a huge binary delays only the
/// connections that wait for its digest.
///
/// A digest is remembered by what the file's writer cannot set back: device, inode, size, modification time **and
/// change time** (which the kernel sets on every write, `utimensat` or rename, to the current time). Rewriting a
/// file in place and restoring its modification time, or replacing it with a file that gets the same inode number,
/// changes the change time, and the new content is hashed anew.
final class ExecutableDigests {
    /// Executables larger than this are not hashed: a pinned manifest does not match them (and the log says why).
    static let sizeLimit: Int64 = 256 << 20
    /// Bytes hashed per turn of the loop.
    static let chunk = 1 << 20
    /// Digests remembered.
    static let cacheLimit = 256

    enum Lookup: Equatable {
        case known(SHA256Digest)
        /// Not hashed yet: ``hash(executableOf:root:then:)`` computes it.
        case unknown
        /// It will not be hashed (too large, or unreadable).
        case unavailable(String)
    }

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        }
    }

    private final class Job {
        let fd: Int32
        let key: FileKey
        var hasher = SHA256()
        var waiting: [(SHA256Digest?) -> Void] = []

        init(fd: Int32, key: FileKey) {
            self.fd = fd
            self.key = key
        }
    }

    private var cache: [FileKey: SHA256Digest] = [:]
    private var jobs: [FileKey: Job] = [:]
    private var timer: LoopTimer?

    init() {}

    /// Hashes from now on a chunk per turn of `loop`; until then (unit tests) a file is hashed at once.
    func start(on loop: EventLoop) throws(SystemError) {
        timer = try LoopTimer(loop: loop) { [unowned self] in self.work() }
    }

    /// The digest of the file `pid` runs, if known.
    func known(forExecutableOf pid: Int32, root: String) -> Lookup {
        var info = stat()
        guard stat(root + "/\(pid)/exe", &info) == 0 else { return .unavailable("its executable cannot be read") }
        guard Int64(info.st_size) <= Self.sizeLimit else {
            return .unavailable("its executable is larger than \(Self.sizeLimit >> 20) MiB, the most heraldd hashes")
        }
        return cache[FileKey(info)].map { .known($0) } ?? .unknown
    }

    /// Hashes the file `pid` runs (opened now, through `PID/exe`, so that it is the running file whatever its path
    /// names later) and calls `then` on the loop with its digest, or nil when it cannot be hashed.
    func hash(executableOf pid: Int32, root: String, then: @escaping (SHA256Digest?) -> Void) {
        let fd = open(root + "/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, Int64(info.st_size) <= Self.sizeLimit else {
            if fd >= 0 { close(fd) }
            then(nil)
            return
        }
        let key = FileKey(info)
        if let known = cache[key] {
            close(fd)
            then(known)
            return
        }
        if let job = jobs[key] {
            close(fd)
            job.waiting.append(then)
            return
        }
        let job = Job(fd: fd, key: key)
        job.waiting.append(then)
        jobs[key] = job
        if let timer {
            timer.schedule(at: MonotonicClock.milliseconds())
        } else {
            while !jobs.isEmpty { work() }
        }
    }

    /// Hashes one chunk of each file waiting; finishes the files read to their end.
    private func work() {
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        for job in Array(jobs.values) {
            let count = buffer.withUnsafeMutableBytes { read(job.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                job.hasher.update(buffer[0..<count])
                continue
            }
            jobs[job.key] = nil
            close(job.fd)
            var digest: SHA256Digest?
            if count == 0 {
                digest = job.hasher.finalize()
                if cache.count >= Self.cacheLimit { cache.removeAll() }
                cache[job.key] = digest
            }
            for waiting in job.waiting { waiting(digest) }
        }
        if !jobs.isEmpty { timer?.schedule(at: MonotonicClock.milliseconds()) }
    }
}
