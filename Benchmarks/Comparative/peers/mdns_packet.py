"""Hand-built mDNS responses (no compression, no third-party modules) for the announcer and the flood."""
import struct

CLASS_IN, CACHE_FLUSH = 1, 0x8000
TYPE_A, TYPE_PTR, TYPE_TXT, TYPE_SRV = 1, 12, 16, 33


def name(text):
    out = b""
    for label in text.rstrip(".").split("."):
        raw = label.encode()
        out += bytes([len(raw)]) + raw
    return out + b"\0"


def record(owner, rtype, ttl, rdata, flush=False):
    return owner + struct.pack(">HHIH", rtype, CLASS_IN | (CACHE_FLUSH if flush else 0), ttl, len(rdata)) + rdata


def service_response(instance, service_type, host, ipv4, port, ttl=120, host_ttl=120, txt=b"\x05a=b c"):
    """An unsolicited response announcing one instance: PTR, SRV, TXT and the host's A record."""
    full = f"{instance}.{service_type}.local"
    target = f"{host}.local"
    answers = [
        record(name(f"{service_type}.local"), TYPE_PTR, ttl, name(full)),
        record(name(full), TYPE_SRV, host_ttl, struct.pack(">HHH", 0, 0, port) + name(target), flush=True),
        record(name(full), TYPE_TXT, ttl, txt, flush=True),
        record(name(target), TYPE_A, host_ttl, bytes(int(p) for p in ipv4.split(".")), flush=True),
    ]
    return struct.pack(">HHHHHH", 0, 0x8400, 0, len(answers), 0, 0) + b"".join(answers)
