import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `herald-enforcement-benchmark attach-moved ROOT [HELD-CGROUP]`: loads the six moved-socket programs of kernel
/// enforcement through the shim heraldd uses (as in `registered` mode: a cgroup without an entry stands open;
/// operators: none, so that every caller is judged; the network namespace it runs in), attaches them to ROOT (the
/// cgroup v2 hierarchy's root directory), gives HELD-CGROUP (an absolute path) the standing "held", prints
/// `attached` and holds the links until SIGTERM or SIGINT. Then it prints on standard error how often each program
/// ran and for how long (counted while kernel.bpf_stats_enabled is 1), closes the links and exits.
func attachMoved(root: String, held: String?) -> Never {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)

    var standing: Int32 = -1
    var origin: Int32 = -1
    guard herald_moved_maps_create(&standing, &origin) == 0 else {
        report("attach-moved: cannot create the maps: \(String(cString: strerror(errno)))\n")
        exit(1)
    }
    var log = [CChar](repeating: 0, count: 8192)
    var programs = [Int32](repeating: -1, count: Int(HERALD_MOVED_PROGRAMS))
    guard
        herald_moved_programs_load(standing, origin, nil, 0, herald_netns_cookie(), 0, &programs, &log, log.count)
            == 0
    else {
        let verifier = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        report("attach-moved: cannot load the programs: \(String(cString: strerror(errno)))\n\(verifier)\n")
        exit(1)
    }
    if let held {
        var status = stat()
        guard stat(held, &status) == 0, herald_moved_standing_set(standing, UInt64(status.st_ino), 2) == 0 else {
            report("attach-moved: cannot hold back \(held): \(String(cString: strerror(errno)))\n")
            exit(1)
        }
    }
    var links = [Int32](repeating: -1, count: Int(HERALD_MOVED_PROGRAMS))
    guard herald_moved_programs_link(programs, root, &links) == 0 else {
        report("attach-moved: cannot attach to \(root): \(String(cString: strerror(errno)))\n")
        exit(1)
    }
    let line = Array("attached\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }

    var received: Int32 = 0
    sigwait(&signals, &received)
    let names = ["socket creation", "socket release", "connect4", "connect6", "sendmsg4", "sendmsg6"]
    for (name, program) in zip(names, programs) {
        report("attach-moved: \(name): \(programStatistics(program))\n")
    }
    for link in links { close(link) }
    for program in programs { close(program) }
    exit(0)
}
