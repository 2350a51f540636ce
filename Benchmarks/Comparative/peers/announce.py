"""Sends one unsolicited mDNS announcement of INSTANCE._TYPE per line read from stdin (the line is the
instance name) and prints `sent MONOTONIC INSTANCE`.

argv: IFACE_IPV4 TYPE HOST"""
import socket, sys, time
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mdns_packet import service_response

ipv4, service_type, host = sys.argv[1:4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((ipv4, 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ipv4))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
print("READY", flush=True)
for line in sys.stdin:
    instance = line.strip()
    if not instance:
        continue
    s.sendto(service_response(instance, service_type, host, ipv4, 4242), ("224.0.0.251", 5353))
    print(f"sent {time.monotonic():.6f} {instance}", flush=True)
