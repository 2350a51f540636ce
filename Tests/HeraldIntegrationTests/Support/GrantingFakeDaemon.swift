import Foundation

/// A stand-in for heraldd's app socket for apps with several connections open at once (HeraldKit opens one
/// per operation), until the daemon's broker can park and grant: a python program that serves each
/// connection on its own thread. Each connection is a shared connection (`connection` request, status in
/// band) whose subordinate requests get status NoError (on the socket passed with `SCM_RIGHTS`) and a reply
/// whose error is NoAuth — parked — then, after `delay` seconds, as when an operator grants the app:
/// - a registration (op 5): registered, under the name it asked for;
/// - a browse (op 6): one result, `Remote Player` on interface 1.
enum GrantingFakeDaemon {
    static let script = #"""
        import os, socket, struct, sys, threading, time

        path, delay = sys.argv[1], float(sys.argv[2])
        NOAUTH = 0xFFFEFFED  # -65555
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(16)
        print("listening", flush=True)
        lock = threading.Lock()

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

        def reply(conn, op, context, error, name=b"", flags=0, interface=1):
            body = struct.pack(">III", flags, interface, error) + name + b"\0_tictactoe._tcp.\0local.\0"
            header = struct.pack(">IIII", 1, len(body), 0, op) + context + struct.pack(">I", 0)
            conn.sendall(header + body)

        def serve(conn):
            established = False
            while True:
                header, fds = read_exactly(conn, 28)
                if header is None:
                    break
                length, op = struct.unpack(">I", header[4:8])[0], struct.unpack(">I", header[12:16])[0]
                context = header[16:24]
                body, more = read_exactly(conn, length) if length else (b"", [])
                if body is None:
                    break
                fds += more
                if not established:
                    conn.sendall(struct.pack(">I", 0))
                    established = True
                    continue
                if op == 63:
                    continue
                if fds:
                    os.write(fds[0], struct.pack(">I", 0))
                    os.close(fds[0])
                reply_op = 65 if op == 5 else 66
                with lock:
                    print("parked op %d" % op, flush=True)
                reply(conn, reply_op, context, NOAUTH)
                time.sleep(delay)
                if op == 5:
                    # Body: error-return path (empty), flags, interface, then the name.
                    name = body[1 + 8:].split(b"\0", 1)[0]
                    reply(conn, 65, context, 0, name=name, flags=2)
                else:
                    reply(conn, 66, context, 0, name=b"Remote Player", flags=2)
                with lock:
                    print("granted op %d" % op, flush=True)
            conn.close()

        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """#

    /// Starts the stand-in in `host`, listening on a new socket in the host's directory.
    static func start(in host: TestLAN.Host, delay: Double) throws -> (process: RunningProcess, socket: String) {
        let socket = host.directory + "/granting-fake.sock"
        let process = try host.spawnPython(script: script, arguments: [socket, String(delay)])
        try process.waitForOutput(containing: "listening", in: .stdout, timeout: 10)
        return (process, socket)
    }
}
