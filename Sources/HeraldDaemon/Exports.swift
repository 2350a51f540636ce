// The pure readers the daemon is configured with and the NSS protocol's codec live in modules of their own
// (HeraldConfig, HeraldNSS), free of sockets, files and clocks, so that they can be tested and fuzzed alone. They
// remain part of HeraldDaemon's interface: whoever imports HeraldDaemon (heraldd, the tests) sees them too.
@_exported import HeraldConfig
@_exported import HeraldNSS
