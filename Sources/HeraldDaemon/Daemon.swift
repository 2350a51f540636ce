#if canImport(Glibc)
import Glibc
#endif
import HeraldEngine
import HeraldWire
import Logging

/// What the daemon was asked to do at start.
public struct DaemonOptions: Sendable {
    public var hostName: String
    public var interfaces: InterfacePolicy
    /// The UDP port for mDNS (5353; tests may use another on an isolated network).
    public var port: UInt16 = HeraldWire.mdnsPort
    public var families: [IPFamily] = IPFamily.allCases
    /// The app socket (dnssd protocol).
    public var appSocketPath = DaemonPaths.system.appSocket
    public var limits = ClientLimits()

    public init(hostName: String, interfaces: InterfacePolicy = InterfacePolicy()) {
        self.hostName = hostName
        self.interfaces = interfaces
    }

    /// The system's host name without any domain part, as published under `.local`.
    public static func systemHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "linux" }
        let name = String(cString: buffer)
        return String(name.split(separator: ".").first ?? "linux")
    }
}

/// The running daemon: the event loop, the network service, and signal handling.
public final class Daemon {
    private let loop: EventLoop
    private let signals: SignalSource
    public let network: NetworkService
    public let appSocket: AppSocketServer
    private let logger: Logger
    private var stopping = false

    public init(options: DaemonOptions, logger: Logger) throws(SystemError) {
        self.logger = logger
        signals = try SignalSource()
        loop = try EventLoop()
        var configuration = EngineConfiguration(hostName: options.hostName, seed: UInt64.random(in: 0...UInt64.max))
        configuration.publishAddresses = true
        network = try NetworkService(configuration: configuration, policy: options.interfaces, loop: loop, logger: logger,
                                     port: options.port, families: options.families)
        appSocket = try AppSocketServer(path: options.appSocketPath, loop: loop, network: network, gate: AllowEverything(),
                                        limits: options.limits, logger: logger)
        try loop.register(signals.fd, for: .readable) { [unowned self] _ in self.handleSignals() }
    }

    /// Runs until SIGTERM or SIGINT; then says goodbye for everything published.
    public func run() {
        logger.info("heraldd running as \(network.engine.hostName), app socket \(appSocket.path)")
        loop.run(nextDeadline: { [unowned self] in self.network.nextDeadline }, onDeadline: { [unowned self] in self.network.runDue() })
        logger.info("heraldd stopped")
    }

    private func handleSignals() {
        for signal in signals.take() {
            switch signal {
            case SIGTERM, SIGINT:
                guard !stopping else { continue }
                stopping = true
                logger.info("stopping: sending goodbyes")
                network.shutdown()
                loop.stop()
            case SIGHUP:
                logger.info("reloading: re-reading interfaces")
                network.rescanInterfaces()
            default:
                break
            }
        }
    }
}
