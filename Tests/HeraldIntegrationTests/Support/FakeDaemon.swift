import Foundation

/// A stand-in for heraldd's app socket that answers with permission decisions Herald's daemon cannot
/// produce yet (its broker allows everything): a python program speaking the dnssd IPC protocol, run in
/// a TestLAN host. It accepts a shared connection (`connection` request, status in band), then answers
/// every subordinate request, whose status goes to the socket passed with `SCM_RIGHTS`, per `mode`:
///
/// - `static`: status NoAuth (a request refused outright, rules 2–4);
/// - `parked`: status NoError, then a reply whose error is NoAuth (rule 5), and nothing more;
/// - `granted`: like `parked`, then after `delay` seconds a browse result (`+ Granted Peer`), as when an
///   operator grants the app.
enum FakeDaemon {
    static let script = #"""
        import os, socket, struct, sys, time

        path, mode, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
        NOAUTH = 0xFFFEFFED  # -65555
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(8)
        print("listening", flush=True)

        def read_exactly(conn, count):
            data, fds = b"", []
            while len(data) < count:
                chunk, ancillary, _, _ = conn.recvmsg(count - len(data), socket.CMSG_SPACE(16))
                if not chunk:
                    return None, fds
                for level, kind, payload in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds += list(struct.unpack("%di" % (len(payload) // 4), payload[:len(payload) - len(payload) % 4]))
                data += chunk
            return data, fds

        def reply(conn, op, context, error, name=b"", regtype=b"_tictactoe._tcp.", flags=0, interface=1):
            # Browse (66) and register (65) replies: flags, interface, error, name, type, domain.
            body = struct.pack(">III", flags, interface, error) + name + b"\0" + regtype + b"\0local.\0"
            header = struct.pack(">IIII", 1, len(body), 0, op) + context + struct.pack(">I", 0)
            conn.sendall(header + body)

        while True:
            conn, _ = listener.accept()
            established = False
            while True:
                header, fds = read_exactly(conn, 28)
                if header is None:
                    break
                version, length, ipc_flags, op = struct.unpack(">IIII", header[:16])
                context = header[16:24]
                body, more = read_exactly(conn, length) if length else (b"", [])
                fds += more
                if body is None:
                    break
                status_to = fds[0] if fds else None
                if not established:
                    conn.sendall(struct.pack(">I", 0))
                    established = True
                    continue
                if op == 63:  # cancel
                    continue
                status = NOAUTH if mode == "static" else 0
                if status_to is not None:
                    os.write(status_to, struct.pack(">I", status))
                    os.close(status_to)
                if mode in ("parked", "granted"):
                    reply_op = 65 if op == 5 else 66
                    reply(conn, reply_op, context, NOAUTH)
                    if mode == "granted":
                        time.sleep(delay)
                        reply(conn, reply_op, context, 0, name=b"Granted Peer", flags=2)
            conn.close()
        """#

    /// Starts the fake daemon in `host`, listening on a new socket in the host's directory.
    static func start(in host: TestLAN.Host, mode: String, delay: Double = 0.5) throws -> (process: RunningProcess, socket: String) {
        let socket = host.directory + "/fake-\(mode).sock"
        let process = try host.spawnPython(script: script, arguments: [socket, mode, String(delay)])
        try process.waitForOutput(containing: "listening", in: .stdout, timeout: 10)
        return (process, socket)
    }
}
