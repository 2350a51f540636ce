import ArgumentParser
import HeraldDaemon
import Logging

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `heraldd` command line: every option of the daemon's contract; flags override the configuration file.
@main
struct HeraldDaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heraldd",
        abstract: "The Herald mDNS/DNS-SD daemon with its local-network permission broker.",
        discussion: """
            heraldd answers and asks multicast DNS questions on the local network (RFC 6762/6763) and \
            serves apps on a Unix socket that speaks the dnssd client protocol, granting each app only the \
            service types its manifest declares once an operator allows it. It runs in the foreground and \
            logs to standard error. It needs no privileges: port 5353 is not a privileged port.
            """
    )

    /// Loading and relocating heraldd, and the runtime's set-up, have mapped megabytes that never run again: given
    /// back before the command line is parsed (see `StartupPages`).
    static func main() {
        StartupPages.release(after: "loading")
        // The Swift runtime reads the command line from /proc/self/cmdline: without /proc (a chroot that has not
        // mounted it) every option would be lost and heraldd would start with none. It also needs /proc to tell
        // its clients apart.
        guard !CommandLine.arguments.isEmpty, access("/proc/self/stat", F_OK) == 0 else {
            printError("heraldd: /proc is not mounted here: heraldd needs it (its command line, its clients' identity)")
            printError("heraldd: mount it first, e.g. mount -t proc proc /proc")
            Self.exit(withError: ExitCode(78))
        }
        main(nil)
    }

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String = DaemonPaths.system.configFile

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The app socket (dnssd protocol). Default: $DNSSD_UDS_PATH, else \(DaemonPaths.system.appSocket).",
            valueName: "path"))
    var socket: String?

    @Option(
        name: .customLong("control-socket"),
        help: ArgumentHelp(
            "The operators' control socket. Default: $HERALD_CONTROL_SOCKET, else \(DaemonPaths.system.controlSocket).",
            valueName: "path"))
    var controlSocket: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where the permission store lives.", valueName: "dir"))
    var stateDirectory: String?

    @Option(
        name: .customLong("apps-dir"),
        help: ArgumentHelp("Directory of app manifests loaded at start and on SIGHUP.", valueName: "dir"))
    var appsDirectory: String?

    @Option(
        name: .customLong("services-dir"),
        help: ArgumentHelp(
            "Directory of static service files (Avahi .service and systemd .dnssd); repeat it for several.",
            valueName: "dir"))
    var servicesDirectories: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The host name to publish (without .local). Default: the system's host name.", valueName: "name"))
    var hostname: String?

    @Option(
        name: .customLong("interface"),
        help: ArgumentHelp(
            "Use only this interface (repeatable). Default: every multicast-capable interface.", valueName: "name"))
    var interfaces: [String] = []

    @Option(
        name: .customLong("nss-socket"),
        help: ArgumentHelp(
            "Serve .local names to libnss-mdns on this socket (Avahi's is /run/avahi-daemon/socket). Default: not served.",
            valueName: "path"))
    var nssSocket: String?

    @Option(
        name: .customLong("mdnsresponder-socket"),
        help: ArgumentHelp(
            "Also serve the app protocol on this path, where programs built against Apple's libdns_sd look for mDNSResponder (/var/run/mDNSResponder). Default: not served.",
            valueName: "path"))
    var mdnsResponderSocket: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String = "info"

    @Flag(
        name: .customLong("check-config"), help: "Check the configuration and the options, print the result and exit.")
    var checkConfig = false

    func validate() throws {
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        guard levels.contains(logLevel) else {
            throw ValidationError("--log-level '\(logLevel)' is not one of: \(levels.joined(separator: ", "))")
        }
        if let hostname, let rule = DaemonConfiguration.hostNameProblem(hostname) {
            throw ValidationError("--hostname '\(hostname)' \(rule)")
        }
    }

    func run() throws {
        let configuration: DaemonConfiguration
        do {
            configuration = try settings()
        } catch {
            printError("heraldd: \(config): \(error)")
            printError("heraldd: fix the file (every setting is described in docs/heraldd.conf) or start without it")
            throw ExitCode(78)
        }
        if checkConfig {
            print("# heraldd: the configuration is valid; these are the settings in effect")
            print(configuration.rendered, terminator: "")
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            // Control characters in what the log quotes are escaped: nothing a client says can forge a line.
            var handler = EscapingLogStream.handler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "heraldd")
        StartupPages.release(after: "reading the configuration", logger: logger)
        do {
            let daemon = try Daemon(configuration: configuration, logger: logger)
            // SIGHUP re-reads manifests, service files and interfaces, not the settings: say so when they changed.
            daemon.configurationChanges = { [self] in
                do {
                    let now = try settings()
                    return now.rendered == configuration.rendered
                        ? nil
                        : "\(config) has changed; its settings apply when heraldd restarts (systemctl restart heraldd)"
                } catch {
                    return "\(config): \(error); heraldd keeps the settings it started with"
                }
            }
            daemon.run()
        } catch {
            printError("heraldd: cannot start: \(error)")
            throw ExitCode(71)
        }
    }

    /// The settings: the configuration file, then the command-line options and the environment variables of the
    /// contract, which win over it.
    private func settings() throws -> DaemonConfiguration {
        let environment = ProcessInfo.processInfo.environment
        var configuration = DaemonConfiguration()
        try configuration.load(from: config, required: configWasGiven)
        if let hostname { configuration.hostName = hostname }
        if !interfaces.isEmpty { configuration.interfaces = interfaces }
        if let socket {
            configuration.appSocket = socket
        } else if let path = environment["DNSSD_UDS_PATH"], !path.isEmpty {
            configuration.appSocket = path
        }
        if let controlSocket {
            configuration.controlSocket = controlSocket
        } else if let path = environment["HERALD_CONTROL_SOCKET"], !path.isEmpty {
            configuration.controlSocket = path
        }
        if let stateDirectory { configuration.stateDirectory = stateDirectory }
        if let appsDirectory { configuration.appsDirectory = appsDirectory }
        if !servicesDirectories.isEmpty { configuration.servicesDirectories = servicesDirectories }
        if let nssSocket { configuration.nssSocket = nssSocket }
        if let mdnsResponderSocket { configuration.mdnsResponderSocket = mdnsResponderSocket }
        return configuration
    }

    /// True when --config was given (then the file must exist); the default file is optional.
    private var configWasGiven: Bool {
        CommandLine.arguments.contains { $0 == "--config" || $0.hasPrefix("--config=") }
    }
}
