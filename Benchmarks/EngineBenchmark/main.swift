// Measures the mDNS engine on its own (no sockets):
//   1. throughput: the realistic corpus replayed into an engine that has a few browses and a resolve active,
//      in messages per second on one core;
//   2. memory per cached record: the growth of resident memory (/proc/self/statm) of caching 10,000 and 100,000 distinct
//      records from synthetic responses, divided by the number of records.
//
//   herald-engine-benchmark CORPUS [--seconds S | --passes N] [--throughput-only | --memory-only]
//
// `--passes N` replays the corpus exactly N times instead of for S seconds: with `--throughput-only`, a fixed amount
// of work for a profiler (valgrind --tool=callgrind) to count.
import Foundation
import HeraldEngine
import HeraldWire

var arguments = Array(CommandLine.arguments.dropFirst())
var seconds = 3.0
if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count {
    seconds = Double(arguments[index + 1]) ?? seconds
    arguments.removeSubrange(index...(index + 1))
}
let throughputOnly = arguments.contains("--throughput-only")
let memoryOnly = arguments.contains("--memory-only")
arguments.removeAll { $0 == "--throughput-only" || $0 == "--memory-only" }
var passes: Int?
if let index = arguments.firstIndex(of: "--passes"), index + 1 < arguments.count {
    passes = Int(arguments[index + 1])
    arguments.removeSubrange(index...(index + 1))
}
guard let path = arguments.first, let data = FileManager.default.contents(atPath: path) else {
    FileHandle.standardError.write(
        Data(
            "usage: herald-engine-benchmark CORPUS [--seconds S | --passes N] [--throughput-only | --memory-only]\n"
                .utf8))
    exit(64)
}
let messages = try CorpusReader.messages(in: Array(data))
let link = LinkID(interfaceIndex: 2, family: .ipv4)
let peer = SocketAddress(.v4(IPv4Address(10, 233, 0, 22)), port: 5353)

func makeEngine(cacheLimit: Int) -> MDNSEngine {
    var configuration = EngineConfiguration(hostName: "bench", seed: 7)
    configuration.cacheLimitPerLink = cacheLimit
    configuration.publishAddresses = false
    var engine = MDNSEngine(configuration: configuration)
    engine.addLink(link, addresses: [LinkAddress(.v4(IPv4Address(10, 233, 0, 99)), prefixLength: 24)], at: .zero)
    return engine
}

// MARK: 1. Throughput

/// The CPU time this thread has used: on a machine busy with other work, messages per CPU second say what one core
/// does, where messages per wall-clock second also count the time other processes had the core.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

// Kept alive to the end (as before the memory figures were measured), so that its freed memory cannot flatter them.
var engine = makeEngine(cacheLimit: 16_384)
if !memoryOnly {
    for (index, type) in ["_http._tcp.local.", "_ipp._tcp.local.", "_airplay._tcp.local.", "_hap._tcp.local."]
        .enumerated()
    {
        engine.browse(OperationID(UInt64(index + 1)), type: DNSName(stringLiteral: type), at: .zero)
    }
    engine.resolve(OperationID(10), instance: "Living Room._airplay._tcp.local.", at: .zero)
    _ = engine.takeActions()

    var clock = Int64(1)
    var processed = 0
    var actions = 0
    let start = Date()
    let cpuStart = threadCPUSeconds()
    var elapsed = 0.0
    repeat {
        for message in messages {
            clock += 1  // one message per virtual millisecond
            engine.receive(message, from: peer, on: link, at: Instant(milliseconds: clock))
            if let deadline = engine.nextDeadline, deadline.milliseconds <= clock {
                engine.advance(to: Instant(milliseconds: clock))
            }
            actions += engine.takeActions().count
        }
        processed += messages.count
        elapsed = Date().timeIntervalSince(start)
    } while passes.map { processed < $0 * messages.count } ?? (elapsed < seconds)
    let cpu = threadCPUSeconds() - cpuStart
    print(
        String(
            format:
                "engine throughput: %.0f messages/s (%d messages in %.2f s, %d actions produced); %.0f messages per CPU second (%.2f s of CPU time)",
            Double(processed) / elapsed, processed, elapsed, actions, Double(processed) / cpu, cpu))
}

// MARK: 2. Memory per cached record

/// The process's resident memory in bytes (from /proc/self/statm): what the records really cost, allocator
/// overhead and fragmentation included.
func heapInUse() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// A response announcing `count` services of one type: PTR, SRV, TXT and an A record each (4 records per service).
func syntheticResponse(batch: Int, count: Int) -> [UInt8] {
    var writer = MessageWriter(flags: .authoritativeResponse, limit: 9000)
    for index in 0..<count {
        let instance = try! DNSName(labelStrings: ["Device \(batch)-\(index)", "_bench", "_tcp", "local"])
        let host = try! DNSName(labelStrings: ["host-\(batch)-\(index)", "local"])
        let txt = try! TXTRecord(["id": Array("\(batch)-\(index)".utf8), "model": Array("Bench 3000".utf8)])
        writer.append(ResourceRecord(name: "_bench._tcp.local.", ttl: 4500, data: .ptr(instance)), to: .answer)
        writer.append(
            ResourceRecord(name: instance, ttl: 120, data: .srv(SRVData(port: 8080, target: host)), cacheFlush: true),
            to: .answer)
        writer.append(ResourceRecord(name: instance, ttl: 4500, data: .txt(txt), cacheFlush: true), to: .answer)
        writer.append(
            ResourceRecord(
                name: host, ttl: 120, data: .a(IPv4Address(UInt32(0x0A00_0000 + batch * 64 + index))), cacheFlush: true),
            to: .answer)
    }
    return writer.message
}

if !throughputOnly {
    for target in [10_000, 100_000] {
        var cacheEngine = makeEngine(cacheLimit: target + 1000)
        let before = heapInUse()
        var records = 0
        var batch = 0
        while records < target {
            let perMessage = min(25, (target - records) / 4)
            guard perMessage > 0 else { break }
            cacheEngine.receive(
                syntheticResponse(batch: batch, count: perMessage), from: peer, on: link,
                at: Instant(milliseconds: Int64(batch)))
            _ = cacheEngine.takeActions()
            records += perMessage * 4
            batch += 1
        }
        let after = heapInUse()
        print(
            String(
                format: "memory: %d records cached, resident memory grew by %.1f MiB: %.0f bytes per record",
                records, Double(after - before) / 1_048_576, Double(after - before) / Double(records)))
        withExtendedLifetime(cacheEngine) {}
    }
}
