"""Cold browse latency of python-zeroconf: TRIALS times, a fresh Zeroconf instance (empty cache) browses TYPE
and the time from starting the browser to the first added service is printed as `trial SECONDS`.

argv: IPV4 TYPE TRIALS"""
import sys, threading, time
from zeroconf import IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

ipv4, service_type, trials = sys.argv[1], sys.argv[2], int(sys.argv[3])
if not service_type.endswith(".local."):
    service_type += ".local."
for _ in range(trials):
    zc = Zeroconf(interfaces=[ipv4], ip_version=IPVersion.V4Only)
    time.sleep(1.0)
    found = threading.Event()

    def handler(zeroconf, service_type, name, state_change):
        if state_change is ServiceStateChange.Added:
            found.set()

    start = time.monotonic()
    browser = ServiceBrowser(zc, service_type, handlers=[handler])
    ok = found.wait(10)
    elapsed = time.monotonic() - start
    print(f"trial {elapsed if ok else -1:.6f}", flush=True)
    browser.cancel()
    zc.close()
