"""A flood of valid-looking but useless mDNS responses: RATE packets per second for SECONDS, each announcing
an instance never seen before (PTR, SRV, TXT, A with short TTLs) of one of 50 service types. Prints
`sent COUNT ELAPSED` at the end.

argv: IPV4 RATE SECONDS [SOURCES]: SOURCES, a comma-separated list of addresses of this host, spreads the packets
over them in turn (one socket each), so that no one source sends more than RATE / len(SOURCES) a second."""
import socket, struct, sys, time
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mdns_packet import service_response

ipv4, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sources = sys.argv[4].split(",") if len(sys.argv) > 4 else [ipv4]


def sender(address):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20 if len(sources) == 1 else 256 << 10)
    s.bind((address, 5353))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ipv4))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
    return s


sockets = [sender(address) for address in sources]
# One template per type; the 8 digits of the instance number are patched in (they appear twice: in the
# PTR's target and as the owner of the SRV and TXT records).
marker = b"00000000"
templates = []
for t in range(50):
    packet = service_response("flood-00000000", f"_flood{t}._tcp", "flooder", ipv4, 9, ttl=5, host_ttl=5)
    positions = [i for i in range(len(packet)) if packet.startswith(marker, i)]
    templates.append((packet, positions))
print("READY", flush=True)
group = ("224.0.0.251", 5353)
sent = 0
start = time.monotonic()
tick = 0.005
per_tick = max(1, int(rate * tick))
next_tick = start
while True:
    now = time.monotonic()
    if now - start >= seconds:
        break
    if now < next_tick:
        time.sleep(next_tick - now)
    next_tick += tick
    for _ in range(per_tick):
        packet, positions = templates[sent % 50]
        digits = b"%08d" % sent
        buf = bytearray(packet)
        for p in positions:
            buf[p:p + 8] = digits
        try:
            sockets[sent % len(sockets)].sendto(buf, group)
        except BlockingIOError:
            pass
        sent += 1
print(f"sent {sent} {time.monotonic() - start:.3f}", flush=True)
