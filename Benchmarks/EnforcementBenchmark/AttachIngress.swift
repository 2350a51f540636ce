import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// `herald-enforcement-benchmark attach-ingress CGROUP...`: loads the cgroup ingress program of kernel enforcement
/// through the shim heraldd uses (operators: root, as heraldd without an operator group; the network namespace it
/// runs in), attaches it to each CGROUP (an absolute path in the cgroup v2 hierarchy) through a BPF link, prints
/// `attached PROGRAM-ID` on standard output and holds the links until SIGTERM or SIGINT. Then it prints on standard
/// error how often the program ran and for how long (the kernel counts only while kernel.bpf_stats_enabled is 1),
/// closes the links, which detaches the program, and exits.
func attachIngress(_ cgroups: [String]) -> Never {
    // Blocked before anything else so that sigwait receives them.
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)

    let operators: [UInt32] = [0]
    var log = [CChar](repeating: 0, count: 8192)
    let program = operators.withUnsafeBufferPointer { buffer in
        herald_bpf_ingress_load(buffer.baseAddress, buffer.count, herald_netns_cookie(), 0, &log, log.count)
    }
    guard program >= 0 else {
        let verifier = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        report("attach-ingress: cannot load the program: \(String(cString: strerror(errno)))\n\(verifier)\n")
        exit(1)
    }
    var links: [Int32] = []
    for cgroup in cgroups {
        let link = herald_bpf_cgroup_link(program, cgroup)
        guard link >= 0 else {
            report("attach-ingress: cannot attach to \(cgroup): \(String(cString: strerror(errno)))\n")
            exit(1)
        }
        links.append(link)
    }
    // Written at once (not through print's buffer): the script waits for this line.
    let line = Array("attached \(herald_bpf_program_id(program))\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }

    var received: Int32 = 0
    sigwait(&signals, &received)
    report("attach-ingress: \(programStatistics(program))\n")
    for link in links { close(link) }
    close(program)
    exit(0)
}

/// The kernel's run count and run time of the program behind `descriptor` (its fdinfo), and their ratio.
func programStatistics(_ descriptor: Int32) -> String {
    guard let file = fopen("/proc/self/fdinfo/\(descriptor)", "r") else { return "no statistics" }
    defer { fclose(file) }
    var fields: [String: UInt64] = [:]
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "\t" || $0 == " " || $0 == "\n" })
        if parts.count == 2, let value = UInt64(parts[1]) { fields[String(parts[0])] = value }
    }
    let runs = fields["run_cnt"] ?? 0
    let time = fields["run_time_ns"] ?? 0
    let each = runs > 0 ? " (\(time / runs) ns a run)" : ""
    return "ran \(runs) times, \(time) ns\(each)"
}
