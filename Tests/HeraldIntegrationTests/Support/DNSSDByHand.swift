/// Python for tests that speak mDNSResponder's dnssd protocol to heraldd by hand, put in front of a test's own
/// script. The socket path is the script's first argument.
///
/// - `connect()`: a connection to the app socket (15 s timeout);
/// - `exactly(s, n)`: `n` bytes from `s`, or exit if it closes first;
/// - `status_of(s)`: a 4-byte status word from `s`; `expect_status(s)` exits unless it is 0;
/// - `request(s, op, context, body, ipc_flags)`: sends one request;
/// - `browse_body(type, interface)`: the body of a browse in `local.`;
/// - `print_reply(s)`: reads one browse reply and prints its context, op, flags, name and type.
enum DNSSDByHand {
    static let python = #"""
        import socket, struct, sys
        def exactly(s, n):
            data = b""
            while len(data) < n:
                chunk = s.recv(n - len(data))
                if not chunk:
                    raise SystemExit("connection closed")
                data += chunk
            return data
        def status_of(s):
            return struct.unpack(">i", exactly(s, 4))[0]
        def expect_status(s):
            status = status_of(s)
            if status != 0:
                raise SystemExit("request refused: %d" % status)
        def connect():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.settimeout(15)
            return s
        def request(s, op, context, body, ipc_flags=0):
            s.sendall(struct.pack(">IIII8sI", 1, len(body), ipc_flags, op, context, 0) + body)
        def browse_body(service_type, interface=0):
            return struct.pack(">II", 0, interface) + service_type.encode() + b"\0local.\0"
        def print_reply(s):
            header = exactly(s, 28)
            version, length, flags, op = struct.unpack(">IIII", header[:16])
            body = exactly(s, length)
            reply_flags, interface, error = struct.unpack(">IIi", body[:12])
            name, regtype = [field.decode() for field in body[12:].split(b"\0")[:2]]
            print("reply", header[16:24].decode(), "op", op, "more", reply_flags & 1 != 0,
                  "add", reply_flags & 2 != 0, "error", error, "name", name, "type", regtype)

        """#
}
