"""A long-running python-zeroconf browser: prints `add MONOTONIC NAME` for every service added.

argv: IPV4 TYPE"""
import sys, time
from zeroconf import IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

ipv4, service_type = sys.argv[1], sys.argv[2]
if not service_type.endswith(".local."):
    service_type += ".local."
zc = Zeroconf(interfaces=[ipv4], ip_version=IPVersion.V4Only)


def handler(zeroconf, service_type, name, state_change):
    if state_change is ServiceStateChange.Added:
        print(f"add {time.monotonic():.6f} {name}", flush=True)


browser = ServiceBrowser(zc, service_type, handlers=[handler])
print("READY", flush=True)
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    pass
