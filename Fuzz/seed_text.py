#!/usr/bin/env python3
"""Seeds a text fuzzer's corpus: every file given that is not Swift is copied whole; from Swift test files the
multi-line string literals (\"\"\" ... \"\"\") are taken, with the closing delimiter's indentation removed as
Swift does. Interpolations and escapes are left as written (a seed need not be exact). Files are named by the
SHA-1 of their bytes, as libFuzzer names corpus files, so seeding twice adds nothing.

Usage: seed_text.py OUTPUT_DIR FILE...
"""
import hashlib
import os
import re
import sys

LITERAL = re.compile(r'"""[ \t]*\n(.*?)\n([ \t]*)"""', re.S)


def literals(text: str):
    for match in LITERAL.finditer(text):
        body, indent = match.group(1), match.group(2)
        lines = [line[len(indent):] if line.startswith(indent) else line for line in body.split("\n")]
        yield "\n".join(lines).encode()


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    added = total = 0
    for path in sys.argv[2:]:
        with open(path, "rb") as handle:
            data = handle.read()
        seeds = list(literals(data.decode(errors="replace"))) if path.endswith(".swift") else [data]
        for seed in seeds:
            total += 1
            target = os.path.join(out, hashlib.sha1(seed).hexdigest())
            if not os.path.exists(target):
                with open(target, "wb") as handle:
                    handle.write(seed)
                added += 1
    print(f"seed_text.py: {total} seeds, {added} new, in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
