#!/usr/bin/env bash
# Builds Herald's drop-in libdns_sd.so.1 (the dns_sd.h API over heraldd's app socket) from the C sources in
# Sources/libdns_sd. Needs only a C compiler; the result links against libc alone.
#
#   bash Scripts/build-libdns_sd.sh [OUTPUT_DIR]      default OUTPUT_DIR: .build/libdns_sd
#
# Prints the path of the library. OUTPUT_DIR also gets the libdns_sd.so link for linking with -ldns_sd.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-.build/libdns_sd}
cc=${CC:-cc}
mkdir -p "$out"
sources=(Sources/libdns_sd/*.c)
"$cc" -std=c11 -shared -fPIC -O2 -g -Wall -Wextra -Werror -fvisibility=hidden \
    -Wl,-soname,libdns_sd.so.1 -Wl,--version-script=Sources/libdns_sd/exports.map -Wl,-z,defs \
    -o "$out/libdns_sd.so.1.tmp.$$" "${sources[@]}"
# A name of its own until it is complete: two builds at once (install tests side by side) never share a file.
mv "$out/libdns_sd.so.1.tmp.$$" "$out/libdns_sd.so.1"
ln -sf libdns_sd.so.1 "$out/libdns_sd.so"
echo "$(cd "$out" && pwd)/libdns_sd.so.1"
