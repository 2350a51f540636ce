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
HEADER = struct.Struct(">IIII8sI")
FLAG_ADD = 0x2
IPC_FLAG_NO_ERROR_SOCKET = 4  # not used: the first request of a connection gets its status in-band


def browse_request(regtype, domain="", context=b"\0" * 8):
    body = struct.pack(">II", 0, 0) + regtype.encode() + b"\0" + domain.encode() + b"\0"
    return HEADER.pack(VERSION, len(body), 0, OP_BROWSE, context, 0) + body


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
    """Splits a byte stream into (operation, body) frames."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        self.buffer += data
        frames = []
        while len(self.buffer) >= HEADER.size:
            _, length, _, op, _, _ = HEADER.unpack_from(self.buffer)
            if len(self.buffer) < HEADER.size + length:
                break
            frames.append((op, self.buffer[HEADER.size:HEADER.size + length]))
            self.buffer = self.buffer[HEADER.size + length:]
        return frames


def parse_browse_reply(body):
    """(flags, error, name) of a browse reply body."""
    flags, _, error = struct.unpack_from(">IIi", body)
    name = body[12:body.index(b"\0", 12)].decode("utf-8", "replace")
    return flags, error, name
