// heraldkit-probe: runs one HeraldKit operation and prints what it sees as JSON lines, so that the
// integration tests can drive the library inside a test-LAN namespace. SIGUSR1 cancels the operation (the
// way the command line says: the handle, or the task running it); the process then stays alive until
// SIGTERM, so that whatever the daemon does afterwards is due to the cancellation, not to an exit.
//
//   heraldkit-probe browse TYPE [--cancel handle|task]
//   heraldkit-probe resolve NAME TYPE
//   heraldkit-probe lookup HOST
//   heraldkit-probe register NAME TYPE PORT [KEY=VALUE | KEY | KEY=\xHH…]… [--cancel handle|task|drop]
// (`drop`: the last reference to the registration handle goes away.)
// The socket comes from DNSSD_UDS_PATH.
import Dispatch
import Foundation
import HeraldKit
import Synchronization

func emit(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Where a state is named in the output.
func name(of state: OperationState) -> String {
    switch state {
    case .setup: return "setup"
    case .ready: return "ready"
    case .waiting: return "waiting"
    case .failed: return "failed"
    case .cancelled: return "cancelled"
    }
}

/// Runs `action` on the first SIGUSR1.
func onSIGUSR1(_ action: @escaping @Sendable () -> Void) -> DispatchSourceSignal {
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
    source.setEventHandler(handler: action)
    source.resume()
    return source
}

/// A TXT argument: `key=value` (with `\xHH` escapes for bytes), or `key` alone for a flag.
func txtAttribute(_ argument: String) -> (String, TXTValue) {
    guard let equals = argument.firstIndex(of: "=") else { return (argument, .flag) }
    var bytes: [UInt8] = []
    var rest = Substring(argument[argument.index(after: equals)...])
    while !rest.isEmpty {
        if rest.hasPrefix("\\x"), rest.count >= 4, let byte = UInt8(rest.dropFirst(2).prefix(2), radix: 16) {
            bytes.append(byte)
            rest = rest.dropFirst(4)
        } else {
            bytes += Array(String(rest.first!).utf8)
            rest = rest.dropFirst()
        }
    }
    return (String(argument[..<equals]), .data(bytes))
}

func option(_ name: String, in arguments: inout [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
    return value
}

func waitForever() async {
    while true { try? await Task.sleep(for: .seconds(3600)) }
}

var arguments = Array(CommandLine.arguments.dropFirst())
let cancelMode = option("--cancel", in: &arguments) ?? "handle"
let herald = Herald()
guard let command = arguments.first else {
    FileHandle.standardError.write(Data("usage: heraldkit-probe browse|resolve|lookup|register …\n".utf8))
    exit(64)
}

switch command {
case "browse" where arguments.count == 2:
    let browser = herald.browse(for: arguments[1])
    let task = Task {
        for await update in browser {
            if case .waiting(_, let reason) = update.state {
                emit(["event": "state", "state": name(of: update.state), "reason": reason])
            } else {
                emit(["event": "state", "state": name(of: update.state)])
            }
            for change in update.changes {
                let (kind, result) =
                    switch change {
                    case .added(let result): ("added", result)
                    case .removed(let result): ("removed", result)
                    }
                emit([
                    "event": kind, "name": result.instance.name, "type": result.instance.type,
                    "domain": result.instance.domain, "interface": Int(result.interfaceIndex),
                ])
            }
        }
        emit(["event": "ended"])
    }
    let signalSource = onSIGUSR1 {
        if cancelMode == "task" { task.cancel() } else { browser.cancel() }
        emit(["event": "cancel-requested", "mode": cancelMode])
    }
    await waitForever()
    _ = signalSource

case "resolve" where arguments.count == 3:
    do {
        let resolved = try await herald.resolve(ServiceInstance(name: arguments[1], type: arguments[2]))
        emit([
            "event": "resolved", "host": resolved.host, "port": Int(resolved.port), "txt": hex(resolved.txtRecord),
            "interface": Int(resolved.interfaceIndex), "addresses": resolved.addresses.map(\.text).sorted(),
            "keys": resolved.txt.keys,
        ])
    } catch {
        emit(["event": "error", "error": "\(error)"])
        exit(1)
    }

case "lookup" where arguments.count == 2:
    do {
        let addresses = try await herald.addresses(of: arguments[1])
        emit(["event": "addresses", "addresses": addresses.map(\.text).sorted()])
    } catch {
        emit(["event": "error", "error": "\(error)"])
        exit(1)
    }

case "register" where arguments.count >= 4:
    guard let port = UInt16(arguments[3]) else { exit(64) }
    var txt = TXTDictionary()
    for argument in arguments.dropFirst(4) {
        let (key, value) = txtAttribute(argument)
        txt[key] = value
    }
    let advertisement = ServiceAdvertisement(name: arguments[1], type: arguments[2], port: port, txt: txt)
    switch cancelMode {
    case "task":
        // The registration lives in a task's scope; cancelling the task withdraws it.
        let task = Task {
            do {
                try await herald.withRegistration(advertisement) { registration in
                    let instance = try await registration.registered()
                    emit(["event": "registered", "name": instance.name])
                    // Throws CancellationError when the task is cancelled, which ends the scope.
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
            } catch {
                emit(["event": "withdrawn", "error": "\(error)"])
            }
        }
        let signalSource = onSIGUSR1 {
            task.cancel()
            emit(["event": "cancel-requested", "mode": "task"])
        }
        await waitForever()
        _ = signalSource
    case "drop":
        // The only reference to the handle sits in this box; SIGUSR1 empties it.
        let holder = Mutex<ServiceRegistration?>(nil)
        do {
            let registration = try await herald.register(advertisement)
            let instance = try await registration.registered()
            holder.withLock { $0 = registration }
            emit(["event": "registered", "name": instance.name])
        } catch {
            emit(["event": "error", "error": "\(error)"])
            exit(1)
        }
        let signalSource = onSIGUSR1 {
            holder.withLock { $0 = nil }
            emit(["event": "cancel-requested", "mode": "drop"])
        }
        await waitForever()
        _ = signalSource
    default:
        do {
            let registration = try await herald.register(advertisement)
            if case .waiting = registration.state { emit(["event": "state", "state": "waiting"]) }
            let instance = try await registration.registered()
            emit(["event": "registered", "name": instance.name])
            let signalSource = onSIGUSR1 {
                registration.cancel()
                emit(["event": "cancel-requested", "mode": "handle", "state": "\(registration.state)"])
            }
            await waitForever()
            _ = signalSource
        } catch {
            emit(["event": "error", "error": "\(error)"])
            exit(1)
        }
    }

default:
    FileHandle.standardError.write(Data("usage: heraldkit-probe browse|resolve|lookup|register …\n".utf8))
    exit(64)
}
