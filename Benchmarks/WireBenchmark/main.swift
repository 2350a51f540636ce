// Measures HeraldWire's parser and serializer on a corpus of length-prefixed mDNS messages.
//
//   herald-wire-benchmark CORPUS [--seconds S] [--json] [--parse-only]
//
// Parsing is complete: every name is decompressed and every record's data decoded into values.
import Foundation
import HeraldWire

var arguments = Array(CommandLine.arguments.dropFirst())
var requestedSeconds = 2.0
if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count {
    requestedSeconds = Double(arguments[index + 1]) ?? requestedSeconds
    arguments.removeSubrange(index...(index + 1))
}
let json = arguments.contains("--json")
let parseOnly = arguments.contains("--parse-only")
arguments.removeAll { $0 == "--json" || $0 == "--parse-only" }
let seconds = requestedSeconds
guard let path = arguments.first else {
    FileHandle.standardError.write(Data("usage: herald-wire-benchmark CORPUS [--seconds S] [--json]\n".utf8))
    exit(64)
}
guard let data = FileManager.default.contents(atPath: path) else {
    FileHandle.standardError.write(Data("herald-wire-benchmark: cannot read \(path)\n".utf8))
    exit(66)
}
let messages = try CorpusReader.messages(in: Array(data))
let parsed = try messages.map { try DNSMessage(parsing: $0) }
let recordsPerPass = parsed.reduce(0) { $0 + $1.entryCount }
let bytesPerPass = messages.reduce(0) { $0 + $1.count }

/// Runs `body` over the whole corpus repeatedly for about `seconds`; returns passes and elapsed seconds.
@MainActor func measure(_ body: () throws -> Int) rethrows -> (passes: Int, elapsed: Double) {
    var checksum = 0
    for _ in 0..<2 { checksum &+= try body() }  // warm up
    let clock = ContinuousClock()
    let start = clock.now
    var passes = 0
    var elapsed = 0.0
    repeat {
        checksum &+= try body()
        passes += 1
        let duration = clock.now - start
        elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    } while elapsed < seconds
    if checksum == 42 { print("") }  // keeps the work observable
    return (passes, elapsed)
}

let parse = try measure {
    var total = 0
    for message in messages { total &+= try DNSMessage(parsing: message).entryCount }
    return total
}
let serialize =
    parseOnly
    ? nil
    : try measure {
        var total = 0
        for message in parsed { total &+= try message.serialized().count }
        return total
    }

@MainActor func report(_ name: String, _ result: (passes: Int, elapsed: Double)) {
    let messageCount = Double(messages.count * result.passes)
    let perSecond = messageCount / result.elapsed
    let recordsPerSecond = Double(recordsPerPass * result.passes) / result.elapsed
    let nsPerMessage = result.elapsed * 1e9 / messageCount
    let megabytesPerSecond = Double(bytesPerPass * result.passes) / result.elapsed / 1e6
    if json {
        print(
            #"{"implementation":"herald","operation":"\#(name)","messages_per_s":\#(Int(perSecond)),"records_per_s":\#(Int(recordsPerSecond)),"ns_per_message":\#(String(format: "%.1f", nsPerMessage)),"mb_per_s":\#(String(format: "%.1f", megabytesPerSecond))}"#
        )
    } else {
        print(
            String(
                format: "%-10@ %12.0f msg/s %14.0f records/s %9.1f ns/msg %8.1f MB/s",
                name as NSString, perSecond, recordsPerSecond, nsPerMessage, megabytesPerSecond))
    }
}
if !json {
    print("corpus: \(path): \(messages.count) messages, \(recordsPerPass) questions+records, \(bytesPerPass) bytes")
}
report("parse", parse)
if let serialize { report("serialize", serialize) }
