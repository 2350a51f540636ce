import Testing

/// Every suite that runs `heraldd` and `herald` (its own test LANs, real peers), one test at a time, also
/// across suites: measurements such as "gone within 2 s" must not compete with another LAN for the CPU.
/// Each test builds its own TestLAN and tears it down, whatever happens.
@Suite(
    "Herald on test LANs",
    .serialized,
    .enabled(if: Requirements.isRoot, Requirements.notRootReason)
)
struct HeraldOnTestLANs {}
