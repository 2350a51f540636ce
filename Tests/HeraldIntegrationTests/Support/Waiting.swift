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
    /// The `avahi-browse -p` lines printed so far.
    var avahiEntries: [AvahiBrowseEntry] {
        stdout.split(separator: "\n").compactMap(AvahiBrowseEntry.init(parsableLine:))
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
