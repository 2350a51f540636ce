import CSystemdBus
import HeraldAvahi

#if canImport(Glibc)
    import Glibc
#endif

/// heraldd's connection to the system bus through sd-bus, on the daemon's epoll loop: the bus's descriptor is
/// watched for what sd-bus wants (`sd_bus_get_events`) and its timeout kept on a loop timer. Incoming method calls
/// and the bus's `NameOwnerChanged` signals are handed over as values; arguments are read and written as
/// ``DBusValue``s. Nothing here knows Avahi's protocol.
final class SystemBus {
    /// A method call held until it is answered.
    final class Call {
        let message: OpaquePointer
        let sender: String
        let path: String
        let interface: String
        let member: String
        /// Nil when an argument is of a type Avahi's API never takes.
        let arguments: [DBusValue]?

        init(_ message: OpaquePointer) {
            self.message = sd_bus_message_ref(message)
            sender = SystemBus.string(sd_bus_message_get_sender(message))
            path = SystemBus.string(sd_bus_message_get_path(message))
            interface = SystemBus.string(sd_bus_message_get_interface(message))
            member = SystemBus.string(sd_bus_message_get_member(message))
            arguments = SystemBus.readArguments(message)
        }

        deinit { sd_bus_message_unref(message) }
    }

    /// Who is behind a bus connection, as the bus daemon says (`GetConnectionCredentials`).
    struct Credentials {
        var pid: Int32
        var uid: UInt32
        var gid: UInt32
    }

    private let bus: OpaquePointer
    private let loop: EventLoop
    private let fd: Int32
    private var timer: LoopTimer?
    private var filterSlot: OpaquePointer?
    private var matchSlot: OpaquePointer?
    /// Messages the filter took, handled once sd-bus is done processing (so that handlers may call the bus).
    private var received: [OpaquePointer] = []
    private var processing = false
    private(set) var closed = false

    /// A method call for us.
    var onCall: ((Call) -> Void)?
    /// A unique name left the bus (its client's objects go).
    var onNameLost: ((String) -> Void)?
    /// The bus gave this connection a well-known name it waited for.
    var onNameAcquired: ((String) -> Void)?
    /// The bus connection broke.
    var onClosed: (() -> Void)?

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket) and watches it on `loop`.
    init(loop: EventLoop) throws(SystemError) {
        var opened: OpaquePointer?
        let result = sd_bus_open_system(&opened)
        guard result >= 0, let opened else { throw SystemError("sd_bus_open_system", code: -result) }
        bus = opened
        self.loop = loop
        fd = sd_bus_get_fd(bus)
        guard fd >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw SystemError("sd_bus_get_fd", code: -fd)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let filter = sd_bus_add_filter(
            bus, &filterSlot,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let bus = Unmanaged<SystemBus>.fromOpaque(userdata).takeUnretainedValue()
                return bus.take(message)
            }, me)
        guard filter >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw SystemError("sd_bus_add_filter", code: -filter)
        }
        let match = sd_bus_match_signal(
            bus, &matchSlot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "NameOwnerChanged", { _, _, _ in 0 }, nil)
        guard match >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw SystemError("sd_bus_match_signal(NameOwnerChanged)", code: -match)
        }
        do {
            try loop.register(fd, for: .readable) { [unowned self] _ in self.process() }
            timer = try LoopTimer(loop: loop) { [unowned self] in self.process() }
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
        watch()
    }

    deinit { close() }

    /// Stops watching the bus and closes the connection.
    func close() {
        guard !closed else { return }
        closed = true
        loop.unregister(fd)
        timer = nil
        for message in received { sd_bus_message_unref(message) }
        received.removeAll()
        sd_bus_slot_unref(filterSlot)
        sd_bus_slot_unref(matchSlot)
        sd_bus_flush_close_unref(bus)
    }

    /// What asking for a well-known name gave.
    enum NameRequest {
        case owner
        /// Another connection owns it; the bus gives it to this one when that one lets it go (`NameAcquired`).
        case queued
        case failed(SystemError)
    }

    /// Asks for a well-known name, waiting in the bus's queue for it when `queue` is true and another connection
    /// has it.
    func requestName(_ name: String, queue: Bool) -> NameRequest {
        // SD_BUS_NAME_QUEUE.
        let result = sd_bus_request_name(bus, name, queue ? 1 << 2 : 0)
        if result < 0 { return .failed(SystemError("RequestName(\(name))", code: -result)) }
        return result == 0 ? .queued : .owner
    }

    /// The bus's unique name for this connection.
    var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0 else { return "?" }
        return Self.string(name)
    }

    /// The credentials of a peer, asked of the bus daemon (a round trip; the answer is cached by the caller).
    func credentials(of sender: String) -> Credentials? {
        var creds: OpaquePointer?
        // SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_GID (libsystemd 252 has no pidfd to give).
        let mask: UInt64 = 1 << 0 | 1 << 4 | 1 << 7
        guard sd_bus_get_name_creds(bus, sender, mask, &creds) >= 0, let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard sd_bus_creds_get_pid(creds, &pid) >= 0, sd_bus_creds_get_euid(creds, &uid) >= 0 else { return nil }
        if sd_bus_creds_get_gid(creds, &gid) < 0 { gid = UInt32.max }
        return Credentials(pid: pid, uid: uid, gid: gid)
    }

    // MARK: - Sending

    /// Answers a call with a method return carrying `arguments`.
    func reply(to call: Call, _ arguments: [DBusValue]) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call.message, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        guard Self.append(arguments, to: reply) else { return }
        send(reply)
    }

    /// Answers a call with an error.
    func reply(to call: Call, error name: String, message: String) {
        var error = sd_bus_error()
        sd_bus_error_set(&error, name, message)
        defer { sd_bus_error_free(&error) }
        _ = sd_bus_reply_method_error(call.message, &error)
        watch()
    }

    /// Sends a signal to one destination, or to every connection that listens for it (`destination` empty).
    func signal(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue]
    ) {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        if !destination.isEmpty, sd_bus_message_set_destination(message, destination) < 0 { return }
        guard Self.append(arguments, to: message) else { return }
        send(message)
    }

    private func send(_ message: OpaquePointer) {
        _ = sd_bus_send(bus, message, nil)
        watch()
    }

    // MARK: - Processing

    private func take(_ message: OpaquePointer) -> Int32 {
        if sd_bus_message_is_method_call(message, nil, nil) > 0 {
            // Calls of the bus's own interfaces on our objects (Peer.Ping) are left to sd-bus.
            if Self.string(sd_bus_message_get_interface(message)) == "org.freedesktop.DBus.Peer" { return 0 }
            received.append(sd_bus_message_ref(message))
            return 1
        }
        if sd_bus_message_is_signal(message, "org.freedesktop.DBus", "NameOwnerChanged") > 0
            || sd_bus_message_is_signal(message, "org.freedesktop.DBus", "NameAcquired") > 0
        {
            received.append(sd_bus_message_ref(message))
        }
        return 0
    }

    /// Lets sd-bus read, write and dispatch until it has nothing left, then handles what the filter took.
    func process() {
        guard !closed, !processing else { return }
        processing = true
        defer { processing = false }
        while !closed {
            let result = sd_bus_process(bus, nil)
            if result < 0 {
                close()
                onClosed?()
                return
            }
            if !received.isEmpty {
                let messages = received
                received.removeAll()
                for message in messages {
                    handle(message)
                    sd_bus_message_unref(message)
                }
                continue
            }
            if result == 0 { break }
        }
        watch()
    }

    private func handle(_ message: OpaquePointer) {
        if sd_bus_message_is_method_call(message, nil, nil) > 0 {
            onCall?(Call(message))
            return
        }
        if sd_bus_message_is_signal(message, "org.freedesktop.DBus", "NameAcquired") > 0 {
            if let arguments = Self.readArguments(message), arguments.count == 1, case .string(let name) = arguments[0]
            {
                onNameAcquired?(name)
            }
            return
        }
        guard let arguments = Self.readArguments(message), arguments.count == 3,
            case .string(let name) = arguments[0], case .string(let old) = arguments[1],
            case .string(let new) = arguments[2]
        else { return }
        if name.hasPrefix(":") && !old.isEmpty && new.isEmpty { onNameLost?(name) }
    }

    /// Watches the descriptor for what sd-bus waits for, and arms the timer for its timeout.
    private func watch() {
        guard !closed else { return }
        let wanted = sd_bus_get_events(bus)
        var events: EventLoop.Events = []
        if wanted > 0 {
            if wanted & Int32(POLLIN) != 0 { events.insert(.readable) }
            if wanted & Int32(POLLOUT) != 0 { events.insert(.writable) }
        }
        loop.modify(fd, for: events.isEmpty ? .readable : events)
        var usec: UInt64 = 0
        if sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max {
            let due = Int64(clamping: usec / 1000)
            if timer?.deadline != due { timer?.schedule(at: due) }
        } else if timer?.deadline != nil {
            timer?.schedule(at: nil)
        }
    }

    // MARK: - Values

    static func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

    private static func code(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }

    /// A message's arguments, or nil when one is of a type Avahi's API does not use.
    static func readArguments(_ message: OpaquePointer) -> [DBusValue]? {
        var values: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let peeked = sd_bus_message_peek_type(message, &type, &contents)
            if peeked == 0 { return values }
            guard peeked > 0 else { return nil }
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "i"):
                var value: Int32 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
                values.append(.int32(value))
            case UInt8(ascii: "u"):
                var value: UInt32 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
                values.append(.uint32(value))
            case UInt8(ascii: "q"):
                var value: UInt16 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
                values.append(.uint16(value))
            case UInt8(ascii: "b"):
                var value: Int32 = 0
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
                values.append(.boolean(value != 0))
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                var value: UnsafePointer<CChar>?
                guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
                values.append(type == code("s") ? .string(string(value)) : .objectPath(string(value)))
            case UInt8(ascii: "a"):
                switch string(contents) {
                case "y":
                    guard let bytes = readByteArray(message) else { return nil }
                    values.append(.bytes(bytes))
                case "ay":
                    guard sd_bus_message_enter_container(message, code("a"), "ay") > 0 else { return nil }
                    var strings: [[UInt8]] = []
                    while true {
                        var inner: CChar = 0
                        var innerContents: UnsafePointer<CChar>?
                        let next = sd_bus_message_peek_type(message, &inner, &innerContents)
                        if next == 0 { break }
                        guard next > 0, let bytes = readByteArray(message) else { return nil }
                        strings.append(bytes)
                    }
                    guard sd_bus_message_exit_container(message) >= 0 else { return nil }
                    values.append(.byteArrays(strings))
                default:
                    return nil
                }
            default:
                return nil
            }
        }
    }

    private static func readByteArray(_ message: OpaquePointer) -> [UInt8]? {
        var pointer: UnsafeRawPointer?
        var size = 0
        guard sd_bus_message_read_array(message, code("y"), &pointer, &size) >= 0 else { return nil }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    private static func append(_ values: [DBusValue], to message: OpaquePointer) -> Bool {
        for value in values {
            var result: Int32
            switch value {
            case .int32(var number): result = sd_bus_message_append_basic(message, code("i"), &number)
            case .uint32(var number): result = sd_bus_message_append_basic(message, code("u"), &number)
            case .uint16(var number): result = sd_bus_message_append_basic(message, code("q"), &number)
            case .boolean(let flag):
                var number: Int32 = flag ? 1 : 0
                result = sd_bus_message_append_basic(message, code("b"), &number)
            case .string(let text): result = text.withCString { sd_bus_message_append_basic(message, code("s"), $0) }
            case .objectPath(let path):
                result = path.withCString { sd_bus_message_append_basic(message, code("o"), $0) }
            case .bytes(let bytes):
                result = bytes.withUnsafeBytes {
                    sd_bus_message_append_array(message, code("y"), $0.baseAddress, $0.count)
                }
            case .byteArrays(let strings):
                result = sd_bus_message_open_container(message, code("a"), "ay")
                for string in strings where result >= 0 {
                    result = string.withUnsafeBytes {
                        sd_bus_message_append_array(message, code("y"), $0.baseAddress, $0.count)
                    }
                }
                if result >= 0 { result = sd_bus_message_close_container(message) }
            }
            if result < 0 { return false }
        }
        return true
    }
}
