"""Prints when each mDNS message naming an instance arrives, to split a registration's time into its phases.

For every message on 224.0.0.251:5353 that holds a name starting with PREFIX it prints
`KIND MONOTONIC NAME`, where KIND is `probe` (a query with records in its authority section, RFC 6762 §8.1),
`query` (any other query) or `response`; NAME is the printable run of bytes from PREFIX on (the instance label).
MONOTONIC is read when the message is received, on the same clock as zc_watch.py's.

argv: IPV4 PREFIX"""
import socket, struct, sys, time

ipv4, prefix = sys.argv[1], sys.argv[2].encode()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("", 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton(ipv4))
print("READY", flush=True)
while True:
    message = s.recv(9000)
    when = time.monotonic()
    if len(message) < 12:
        continue
    flags, authority = struct.unpack("!H", message[2:4])[0], struct.unpack("!H", message[8:10])[0]
    kind = "response" if flags & 0x8000 else ("probe" if authority else "query")
    names, start = set(), message.find(prefix)
    while start >= 0:
        end = start
        while end < len(message) and 32 < message[end] < 127:
            end += 1
        names.add(message[start:end].decode())
        start = message.find(prefix, end)
    for name in sorted(names):
        print(f"{kind} {when:.6f} {name}", flush=True)
