#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The wall-clock time of an event: `HH:MM:SS.mmm` in local time for people, ISO 8601 in UTC for JSON.
struct Timestamp {
    var seconds: Int
    var milliseconds: Int

    /// Now.
    init() {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        seconds = Int(spec.tv_sec)
        milliseconds = Int(spec.tv_nsec / 1_000_000)
    }

    /// `14:03:27.512`, local time.
    var clock: String {
        var time = time_t(seconds)
        var parts = tm()
        localtime_r(&time, &parts)
        return "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(milliseconds, width: 3))"
    }

    /// `2025-01-31T13:03:27.512Z`.
    var iso8601: String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return "\(pad(parts.tm_year + 1900, width: 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(milliseconds, width: 3))Z"
    }

    private func pad(_ value: some BinaryInteger, width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
