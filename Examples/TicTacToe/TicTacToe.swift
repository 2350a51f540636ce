import ArgumentParser
import Foundation
import HeraldIPC
import HeraldKit

/// A Tic Tac Toe player that advertises itself on the local network and lists the other players it finds.
@main
struct TicTacToe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tictactoe",
        abstract: "Advertise a Tic Tac Toe player on the local network and list the other players.",
        discussion: """
            Advertises _tictactoe._tcp through heraldd and browses for the same type. When the app is not yet \
            allowed to use the local network, it says "waiting for permission" and carries on by itself once \
            an operator grants access (herald grant org.example.tictactoe).
            """)

    @Option(help: "The player's name (default: \"Player on HOST\").")
    var name: String?

    @Option(help: "The TCP port to listen and advertise on (0: any free port).")
    var port: UInt16 = 0

    @Option(help: ArgumentHelp("Exit after this many seconds.", valueName: "seconds"))
    var seconds: Double?

    @Flag(help: "Exit as soon as another player is seen (exit status 1 if --seconds passes first).")
    var exitAfterFirstPeer = false

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Option(
        help: ArgumentHelp("The daemon's app socket (default: DNSSD_UDS_PATH, else the system's).", valueName: "path"))
    var socket: String?

    func validate() throws {
        if let seconds, seconds <= 0 { throw ValidationError("--seconds must be more than 0") }
        if let name, name.isEmpty || name.utf8.count > 63 { throw ValidationError("--name must be 1 to 63 bytes") }
    }

    func run() async throws {
        let output = Output(json: json)
        let playerName = name ?? "Player on \(ProcessInfo.processInfo.hostName)"
        let listener = try PlayerListener(port: port, greeting: "tictactoe: \(playerName)")
        let herald = Herald(socketPath: socket)
        let outcome = Outcome()

        if let seconds {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                outcome.finish(exitCode: exitAfterFirstPeer ? 1 : 0)
            }
        }

        // Advertise, and report what happens to the advertisement.
        let advertisement = ServiceAdvertisement(
            name: playerName, type: Self.serviceType, port: listener.port,
            txt: ["player": .data(Array(playerName.utf8)), "board": "3x3"])
        let registration: ServiceRegistration
        do {
            registration = try await herald.register(advertisement)
        } catch {
            output.failure("cannot advertise: \(error)")
            throw ExitCode(error.exitCode)
        }
        let ownNames = OwnNames(requested: playerName)
        Task {
            for await state in registration.states {
                switch state {
                case .registered(let instance):
                    ownNames.add(instance.name)
                    output.advertising(instance.name, port: listener.port)
                case .waiting(_, let reason):
                    output.waiting("advertising", reason: reason)
                case .failed(let error):
                    output.failure("advertising failed: \(error)")
                    outcome.finish(exitCode: error.exitCode)
                case .setup, .cancelled:
                    break
                }
            }
        }

        // Browse for the other players.
        let browser = herald.browse(for: Self.serviceType)
        Task {
            for await update in browser {
                switch update.state {
                case .waiting(_, let reason) where update.changes.isEmpty:
                    output.waiting("looking for players", reason: reason)
                case .failed(let error):
                    output.failure("looking for players failed: \(error)")
                    outcome.finish(exitCode: error.exitCode)
                default:
                    break
                }
                for change in update.changes where !ownNames.contains(change.result.instance.name) {
                    output.player(change)
                    if case .added = change, exitAfterFirstPeer { outcome.finish(exitCode: 0) }
                }
            }
        }

        let code = await outcome.exitCode()
        browser.cancel()
        registration.cancel()
        _ = listener
        if code != 0 { throw ExitCode(code) }
    }

    static let serviceType = "_tictactoe._tcp"
}

extension Error {
    /// sysexits: 77 for "not permitted", 69 when the daemon is unavailable, 1 otherwise.
    var exitCode: Int32 {
        switch self as? HeraldError {
        case .daemon(let code) where code == .noAuth: return 77
        case .connection: return 69
        default: return 1
        }
    }
}
