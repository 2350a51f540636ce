"""Prints `seen REALTIME TEXT` when a frame holding MARKER arrives on IFACE. REALTIME is the kernel's receive
timestamp of the frame (SO_TIMESTAMPNS on an AF_PACKET socket, CLOCK_REALTIME): the moment the packet reached
this host, before any daemon read it. TEXT is the printable run of bytes starting at MARKER.

argv: IFACE MARKER"""
import socket, struct, sys

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
iface, marker = sys.argv[1], sys.argv[2].encode()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s.bind((iface, 0))
print("READY", flush=True)
while True:
    frame, ancillary, _, _ = s.recvmsg(65535, 256)
    if marker not in frame:
        continue
    stamp = None
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            stamp = seconds + nanoseconds / 1e9
    start = frame.index(marker)
    end = start
    while end < len(frame) and 32 < frame[end] < 127:
        end += 1
    print(f"seen {stamp:.6f} {frame[start:end].decode()}", flush=True)
