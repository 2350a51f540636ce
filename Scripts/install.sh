#!/usr/bin/env bash
# Installs Herald where a Linux system expects it, or removes it again.
#
#   bash Scripts/install.sh [--prefix /usr/local] [--destdir ROOT] [--bin-dir DIR]     install
#   bash Scripts/install.sh --uninstall [--prefix /usr/local] [--destdir ROOT]          remove what install put there
#
# Installs heraldd and herald ($PREFIX/bin, built in release mode unless --bin-dir names built binaries), the
# drop-in libdns_sd.so.1 ($PREFIX/lib/herald, for LD_LIBRARY_PATH), the
# systemd units, sysusers.d and tmpfiles.d entries, the commented default configuration (/etc/herald/heraldd.conf,
# never overwriting one that exists), the example service files ($PREFIX/share/herald/services.d), and shell
# completions for herald. Everything installed is listed in $PREFIX/share/herald/installed-files, which
# --uninstall reads (the configuration file is kept). With --destdir the tree is built under ROOT (for packaging
# or tests); without it, afterwards run: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
destdir=""
bin_dir=""
uninstall=false
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --destdir) destdir=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        --uninstall) uninstall=true; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 64 ;; esac

manifest="$destdir$prefix/share/herald/installed-files"

if $uninstall; then
    [ -f "$manifest" ] || { echo "install.sh: nothing to remove: $manifest not found" >&2; exit 65; }
    while IFS= read -r path; do
        rm -f "$destdir$path"
    done <"$manifest"
    rm -f "$manifest"
    rmdir "$destdir$prefix/share/herald/services.d" "$destdir$prefix/share/herald" "$destdir$prefix/lib/herald" 2>/dev/null || true
    echo "removed Herald from ${destdir:-/} (kept /etc/herald/heraldd.conf)"
    exit 0
fi

if [ -z "$bin_dir" ]; then
    swift build -c release --product heraldd >/dev/null
    swift build -c release --product herald >/dev/null
    bin_dir=$(swift build -c release --show-bin-path)
fi
for binary in heraldd herald; do
    [ -x "$bin_dir/$binary" ] || { echo "install.sh: $bin_dir/$binary is missing; build it first" >&2; exit 66; }
done
# The drop-in libdns_sd.so.1 (C, needs only cc). It goes to its own directory so that it does not shadow the
# distribution's libdns_sd.so.1: programs use it with LD_LIBRARY_PATH=$prefix/lib/herald.
libdns_sd=$(bash Scripts/build-libdns_sd.sh)

installed=()
put() {  # put MODE SOURCE TARGET (target without destdir)
    install -D -m "$1" "$2" "$destdir$3"
    installed+=("$3")
}
put_text() {  # put_text MODE TARGET < text
    mkdir -p "$(dirname "$destdir$2")"
    cat >"$destdir$2"
    chmod "$1" "$destdir$2"
    installed+=("$2")
}

put 0755 "$bin_dir/heraldd" "$prefix/bin/heraldd"
put 0755 "$bin_dir/herald" "$prefix/bin/herald"
put 0755 "$libdns_sd" "$prefix/lib/herald/libdns_sd.so.1"

# systemd reads units, sysusers.d and tmpfiles.d from /usr/lib (the distribution's) and /etc (the
# administrator's), not from /usr/local: a /usr install uses the first, any other prefix the second.
systemd_root=/etc
[ "$prefix" = /usr ] && systemd_root=/usr/lib
# The service names the installed daemon's path.
put_text 0644 "$systemd_root/systemd/system/heraldd.service" \
    < <(sed "s|^ExecStart=/usr/local/bin/heraldd|ExecStart=$prefix/bin/heraldd|" systemd/heraldd.service)
put 0644 systemd/heraldd-dnssd.socket "$systemd_root/systemd/system/heraldd-dnssd.socket"
put 0644 systemd/heraldd-control.socket "$systemd_root/systemd/system/heraldd-control.socket"
put 0644 systemd/herald.sysusers "$systemd_root/sysusers.d/herald.conf"
put 0644 systemd/herald.tmpfiles "$systemd_root/tmpfiles.d/herald.conf"

for file in services.d/*; do
    put 0644 "$file" "$prefix/share/herald/services.d/$(basename "$file")"
done
put_text 0644 "$prefix/share/bash-completion/completions/herald" < <("$bin_dir/herald" --generate-completion-script bash)
put_text 0644 "$prefix/share/zsh/site-functions/_herald" < <("$bin_dir/herald" --generate-completion-script zsh)
put_text 0644 "$prefix/share/fish/vendor_completions.d/herald.fish" < <("$bin_dir/herald" --generate-completion-script fish)

# The configuration is the administrator's: installed once, never overwritten, not removed by --uninstall.
if [ ! -e "$destdir/etc/herald/heraldd.conf" ]; then
    install -D -m 0644 docs/heraldd.conf "$destdir/etc/herald/heraldd.conf"
fi
mkdir -p "$destdir/etc/herald/apps.d" "$destdir/etc/herald/services.d"

installed+=("$prefix/share/herald/installed-files")
mkdir -p "$(dirname "$manifest")"
printf '%s\n' "${installed[@]}" >"$manifest"
echo "installed Herald under ${destdir:-/} with prefix $prefix (${#installed[@]} files)"
if [ -z "$destdir" ]; then
    echo "next: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload; systemctl enable --now heraldd"
fi
