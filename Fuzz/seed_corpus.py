#!/usr/bin/env python3
"""Splits capture files (repeated 2-byte big-endian length + DNS message) into one file per message,
named by the SHA-1 of its bytes as libFuzzer names corpus files, so seeding twice adds nothing.

Usage: seed_corpus.py OUTPUT_DIR CORPUS_FILE...
"""
import hashlib
import os
import sys


def split(data: bytes, source: str):
    offset = 0
    while offset < len(data):
        if offset + 2 > len(data):
            raise SystemExit(f"{source}: truncated length prefix at byte {offset}")
        length = int.from_bytes(data[offset:offset + 2], "big")
        if offset + 2 + length > len(data):
            raise SystemExit(f"{source}: message at byte {offset} runs past the end of the file")
        yield data[offset + 2:offset + 2 + length]
        offset += 2 + length


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    added = total = 0
    for path in sys.argv[2:]:
        with open(path, "rb") as handle:
            data = handle.read()
        for message in split(data, path):
            total += 1
            target = os.path.join(out, hashlib.sha1(message).hexdigest())
            if not os.path.exists(target):
                with open(target, "wb") as handle:
                    handle.write(message)
                added += 1
    print(f"seeded {out}: {total} messages, {added} new files", file=sys.stderr)


if __name__ == "__main__":
    main()
