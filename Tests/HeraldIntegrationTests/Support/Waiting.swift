import Foundation

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held and when
/// (seconds after the call) it was first seen to hold.
@discardableResult
func waitUntil(timeout: TimeInterval, _ condition: () throws -> Bool) rethrows -> (held: Bool, after: TimeInterval) {
    let start = Date()
    while true {
        if try condition() { return (true, Date().timeIntervalSince(start)) }
        if Date().timeIntervalSince(start) > timeout { return (false, Date().timeIntervalSince(start)) }
        usleep(20_000)
    }
}

extension RunningProcess {
    /// The complete `avahi-browse -p` lines printed so far (a line still being written is left for the next look:
    /// cut short, a resolved line would read as one without host, port and TXT).
    var avahiEntries: [AvahiBrowseEntry] {
        let output = stdout
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        if !output.hasSuffix("\n") { lines.removeLast() }
        return lines.compactMap(AvahiBrowseEntry.init(parsableLine:))
    }

    /// The JSON objects printed so far, one per line.
    var jsonLines: [[String: Any]] { HeraldJSON.objects(stdout) }
}

/// Hex of bytes, as herald's `txtHex` and python's `bytes.hex()` write them.
func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// TXT rdata from character-strings.
func txtRData(_ strings: [[UInt8]]) -> [UInt8] {
    strings.isEmpty ? [0] : strings.flatMap { [UInt8($0.count)] + $0 }
}
