"""Parse throughput of python-zeroconf's compiled DNSIncoming on a corpus of length-prefixed messages.

Every message is fully parsed: questions, and all records through answers() (which also decodes the
authority and additional sections in zeroconf), so the work matches herald-wire-benchmark's parse.
"""
import json
import sys
import time

from zeroconf import DNSIncoming, __version__


def read_corpus(path):
    data = open(path, "rb").read()
    messages, offset = [], 0
    while offset < len(data):
        length = int.from_bytes(data[offset:offset + 2], "big")
        messages.append(data[offset + 2:offset + 2 + length])
        offset += 2 + length
    return messages


def main():
    path = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    messages = read_corpus(path)
    records = 0
    for message in messages:
        incoming = DNSIncoming(message)
        records += len(incoming.questions) + len(incoming.answers())
    for _ in range(2):  # warm up
        for message in messages:
            DNSIncoming(message).answers()
    passes, start = 0, time.perf_counter()
    while True:
        for message in messages:
            incoming = DNSIncoming(message)
            incoming.questions
            incoming.answers()
        passes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    count = len(messages) * passes
    print(json.dumps({
        "implementation": f"python-zeroconf {__version__}",
        "operation": "parse",
        "messages_per_s": int(count / elapsed),
        "records_per_s": int(records * passes / elapsed),
        "ns_per_message": round(elapsed * 1e9 / count, 1),
    }))


main()
