// herald-enforcement-benchmark APPS CGROUP-PARENT [MOUNT-PREFIX]
// herald-enforcement-benchmark attach-ingress CGROUP...      (AttachIngress.swift)
// herald-enforcement-benchmark attach-moved ROOT [HELD-CGROUP] (AttachMoved.swift)
//
// Builds the kernel rules (EnforcementRuleset) of APPS registered apps, each in a cgroup CGROUP-PARENT/app-N.service
// (paths below the cgroup v2 root; the cgroups must exist for nft to load the rules), every other one granted,
// on a LAN of one /24 and one /64. Prints the ruleset on standard output, and on standard error how long building
// it took (the median of 20 builds). Benchmarks/enforcement.sh loads it with nft and measures the data path.
import HeraldBroker
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `text` to standard error.
func report(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "attach-ingress" {
    attachIngress(Array(arguments[2...]))
}
if arguments.count >= 3, arguments[1] == "attach-moved" {
    attachMoved(root: arguments[2], held: arguments.count > 3 ? arguments[3] : nil)
}
guard arguments.count >= 3, let count = Int(arguments[1]), count >= 0 else {
    report(
        "usage: herald-enforcement-benchmark APPS CGROUP-PARENT [MOUNT-PREFIX]\n"
            + "       herald-enforcement-benchmark attach-ingress CGROUP...\n"
            + "       herald-enforcement-benchmark attach-moved ROOT [HELD-CGROUP]\n")
    exit(64)
}
let parent = arguments[2]
let mount = arguments.count > 3 ? arguments[3] : ""

let apps = (0..<count).map { index in
    EnforcedApp(
        id: "org.example.bench\(index)", granted: index % 2 == 0, multicast: index % 4 == 0,
        cgroups: ["\(parent)/app-\(index).service"])
}
let networks = LocalNetworks(addresses: [
    (.v4(IPv4Address(10, 77, 0, 1)), 24), (.v6(IPv6Address("fd00:77::1")!), 64),
])
let input = EnforcementInput(
    mode: .registered, apps: apps, networks: networks, exemptCgroups: [], cgroupMount: mount)

func nanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

var durations: [UInt64] = []
var text = ""
for _ in 0..<20 {
    let start = nanoseconds()
    text = EnforcementRuleset.replacing(with: input)
    durations.append(nanoseconds() - start)
}
durations.sort()
let median = Double(durations[durations.count / 2]) / 1_000_000
report("build: \(count) apps, \(text.utf8.count) bytes of rules, median \(median) ms of 20\n")
print(text, terminator: "")
