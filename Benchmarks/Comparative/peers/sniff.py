"""Prints `seen MONOTONIC` when a frame holding MARKER arrives on IFACE (an AF_PACKET socket: the time the
packet reached this host, before any daemon read it).

argv: IFACE MARKER"""
import socket, sys, time
iface, marker = sys.argv[1], sys.argv[2].encode()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((iface, 0))
print("READY", flush=True)
while True:
    frame = s.recv(65535)
    if marker in frame:
        now = time.monotonic()
        start = frame.index(marker)
        end = start
        while end < len(frame) and 32 < frame[end] < 127:
            end += 1
        print(f"seen {now:.6f} {frame[start:end].decode()}", flush=True)
