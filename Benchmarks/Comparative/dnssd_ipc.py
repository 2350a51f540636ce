"""The few frames of the dnssd IPC protocol (version 1) the benchmarks need: browse requests and replies.

Header (28 bytes, big-endian): version, datalen, ipc_flags, op, 8 bytes of client context, reg_index.
A browse request (op 6) carries flags, interface index, regtype and domain (NUL-terminated); the daemon
answers with a 4-byte status, then browse replies (op 66): flags, interface index, error, name, regtype, domain.
"""

import socket
import struct

VERSION = 1
OP_BROWSE = 6
OP_BROWSE_REPLY = 66
OP_RESOLVE = 7
OP_RESOLVE_REPLY = 67
HEADER = struct.Struct(">IIII8sI")
FLAG_ADD = 0x2
IPC_FLAG_NO_ERROR_SOCKET = 4  # not used: the first request of a connection gets its status in-band


def browse_request(regtype, domain="", context=b"\0" * 8):
    body = struct.pack(">II", 0, 0) + regtype.encode() + b"\0" + domain.encode() + b"\0"
    return HEADER.pack(VERSION, len(body), 0, OP_BROWSE, context, 0) + body


def resolve_request(interface_index, name, regtype, domain):
    body = (struct.pack(">II", 0, interface_index) + name.encode() + b"\0" + regtype.encode() + b"\0"
            + domain.encode() + b"\0")
    return HEADER.pack(VERSION, len(body), 0, OP_RESOLVE, b"\0" * 8, 0) + body


OP_REG_SERVICE = 5


def register_request(name, regtype, port, txt=b"", domain="", host=""):
    body = (struct.pack(">II", 0, 0) + name.encode() + b"\0" + regtype.encode() + b"\0" + domain.encode()
            + b"\0" + host.encode() + b"\0" + struct.pack(">HH", port, len(txt)) + txt)
    return HEADER.pack(VERSION, len(body), 0, OP_REG_SERVICE, b"\0" * 8, 0) + body


def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("daemon closed the connection")
        data += chunk
    return data


def read_status(sock):
    return struct.unpack(">i", recv_exact(sock, 4))[0]


class ReplyReader:
    """Splits a byte stream into (operation, body) frames. With `expect_status`, the 4-byte status of the
    connection's first request is also taken out of the stream (into `status`) wherever it comes: heraldd
    writes it after replies that were ready at once (a cached answer), which the protocol does not allow.
    A status word is never 1, so a word of 1 (the version field) begins a frame."""

    def __init__(self, expect_status=False):
        self.buffer = b""
        self.status = None
        self.expect_status = expect_status
        self.status_after_replies = False
        self.frames_seen = 0

    def feed(self, data):
        self.buffer += data
        frames = []
        while True:
            if self.expect_status and self.status is None and len(self.buffer) >= 4:
                if struct.unpack_from(">I", self.buffer)[0] != VERSION:
                    self.status = struct.unpack_from(">i", self.buffer)[0]
                    self.status_after_replies = self.frames_seen > 0
                    self.buffer = self.buffer[4:]
                    continue
            if len(self.buffer) < HEADER.size:
                break
            _, length, _, op, _, _ = HEADER.unpack_from(self.buffer)
            if len(self.buffer) < HEADER.size + length:
                break
            frames.append((op, self.buffer[HEADER.size:HEADER.size + length]))
            self.frames_seen += 1
            self.buffer = self.buffer[HEADER.size + length:]
        return frames


def _strings(body, offset, count):
    values = []
    for _ in range(count):
        end = body.index(b"\0", offset)
        values.append(body[offset:end].decode("utf-8", "replace"))
        offset = end + 1
    return values, offset


def parse_browse_reply(body):
    """(flags, error, name) of a browse reply body."""
    flags, _, error = struct.unpack_from(">IIi", body)
    name = body[12:body.index(b"\0", 12)].decode("utf-8", "replace")
    return flags, error, name


def parse_browse_reply_full(body):
    """(flags, interface index, error, name, regtype, domain) of a browse reply body."""
    flags, interface_index, error = struct.unpack_from(">IIi", body)
    (name, regtype, domain), _ = _strings(body, 12, 3)
    return flags, interface_index, error, name, regtype, domain


def parse_resolve_reply(body):
    """(error, full name, host target, port) of a resolve reply body."""
    _, _, error = struct.unpack_from(">IIi", body)
    (fullname, target), offset = _strings(body, 12, 2)
    port = struct.unpack_from(">H", body, offset)[0] if len(body) >= offset + 2 else 0
    return error, fullname, target, port
