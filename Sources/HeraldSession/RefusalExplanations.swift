/// Why each process was last refused or parked, for the question that follows on a connection of its own (as
/// `DNSServiceGetProperty` asks, and `herald` and HeraldKit ask for the `HeraldPermissionExplanation` property).
///
/// A process is known by its pid **and its start time**: a later process that is handed the same pid started later,
/// so it never reads another's explanation (which names a program and a user). At most twice ``kept`` entries are
/// held however many processes come and go: the newest generation, and the one before it.
struct RefusalExplanations {
    /// A process: its pid and when it started (clock ticks after boot).
    struct Process: Hashable {
        var pid: Int32
        var startTime: UInt64
    }

    static let kept = 256
    private var newest: [Process: String] = [:]
    private var older: [Process: String] = [:]

    /// The explanation last recorded for `process`.
    func explanation(for process: Process) -> String? {
        newest[process] ?? older[process]
    }

    /// Records `explanation` for `process`, or forgets what it had when nil (its last request was not refused).
    mutating func record(_ explanation: String?, for process: Process) {
        guard let explanation else {
            newest[process] = nil
            older[process] = nil
            return
        }
        if newest.count >= Self.kept, newest[process] == nil {
            older = newest
            newest = [:]
        }
        newest[process] = explanation
    }

    /// Entries held now.
    var count: Int { newest.count + older.count }
}
