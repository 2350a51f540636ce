#!/usr/bin/env bash
# Installs Herald where a Linux system expects it, or removes it again.
#
#   bash Scripts/install.sh [--prefix /usr/local] [--destdir ROOT] [--bin-dir DIR]     install
#   bash Scripts/install.sh --uninstall [--prefix /usr/local] [--destdir ROOT]          remove what install put there
#   add --replace-avahi to an install: heraldd also takes avahi-daemon's place (PREFIX/lib/herald/avahi-takeover
#   take: avahi-daemon masked, its NSS socket and /etc/avahi/services served by heraldd); --uninstall gives it back
#
# Installs heraldd and herald ($PREFIX/bin, built in release mode unless --bin-dir names built binaries, after
# Scripts/install-build-deps.sh has installed the Debian packages the build needs), the
# drop-in libdns_sd.so.1 ($PREFIX/lib/herald, for LD_LIBRARY_PATH), the
# systemd units, sysusers.d and tmpfiles.d entries, the commented default configuration (/etc/herald/heraldd.conf,
# never overwriting one that exists), the example service files ($PREFIX/share/herald/services.d), shell
# completions for herald and heraldd (bash, zsh, fish) and the manual pages herald(1), heraldd(8) and
# heraldd.conf(5) ($PREFIX/share/man), and the README ($PREFIX/share/doc/herald, which the units' Documentation=
# names). Everything installed is listed in $PREFIX/share/herald/installed-files, which --uninstall reads (the configuration file is kept). With --destdir the tree is built under ROOT (for packaging
# or tests); without it, afterwards run: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
destdir=""
bin_dir=""
uninstall=false
replace_avahi=false
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --destdir) destdir=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        --uninstall) uninstall=true; shift ;;
        --replace-avahi) replace_avahi=true; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 64 ;; esac

manifest="$destdir$prefix/share/herald/installed-files"

if $uninstall; then
    [ -f "$manifest" ] || { echo "install.sh: nothing to remove: $manifest not found" >&2; exit 65; }
    # Avahi's place goes back before the helper that knows how is removed.
    takeover="$destdir$prefix/lib/herald/avahi-takeover"
    if [ -x "$takeover" ]; then ROOT="$destdir" "$takeover" give-back; fi
    while IFS= read -r path; do
        rm -f "$destdir$path"
    done <"$manifest"
    rm -f "$manifest"
    rmdir "$destdir$prefix/share/herald/services.d" "$destdir$prefix/share/herald" "$destdir$prefix/lib/herald" \
        "$destdir$prefix/share/doc/herald" 2>/dev/null || true
    echo "removed Herald from ${destdir:-/} (kept /etc/herald/heraldd.conf)"
    exit 0
fi

if [ -z "$bin_dir" ]; then
    sh Scripts/install-build-deps.sh
    swift build -c release --static-swift-stdlib --product heraldd >/dev/null
    swift build -c release --static-swift-stdlib --product herald >/dev/null
    bin_dir=$(swift build -c release --static-swift-stdlib --show-bin-path)
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
put 0755 Scripts/avahi-takeover.sh "$prefix/lib/herald/avahi-takeover"

# systemd reads units, sysusers.d and tmpfiles.d from /usr/lib (the distribution's) and /etc (the
# administrator's), not from /usr/local: a /usr install uses the first, any other prefix the second.
systemd_root=/etc
[ "$prefix" = /usr ] && systemd_root=/usr/lib
# The units name the installed daemon and README (their Documentation=, which `systemctl help` opens).
unit_paths="s|^ExecStart=/usr/local/bin/heraldd|ExecStart=$prefix/bin/heraldd|;s|file:///usr/local/share/doc/herald/|file://$prefix/share/doc/herald/|"
for unit in heraldd.service heraldd-dnssd.socket heraldd-control.socket; do
    put_text 0644 "$systemd_root/systemd/system/$unit" < <(sed "$unit_paths" "systemd/$unit")
done
put 0644 README.md "$prefix/share/doc/herald/README.md"
# The drop-in that gives heraldd CAP_NET_ADMIN for kernel enforcement (docs/enforcement.md): an example to install
# by hand only where enforcement is on, so it goes with the documentation, not into heraldd.service.d.
put 0644 systemd/heraldd-enforcement.conf "$prefix/share/doc/herald/heraldd-enforcement.conf"
put 0644 systemd/herald.sysusers "$systemd_root/sysusers.d/herald.conf"
put 0644 systemd/herald.tmpfiles "$systemd_root/tmpfiles.d/herald.conf"

# Who may own and call org.freedesktop.Avahi (Avahi's D-Bus API, docs/dbus-api.md): the bus reads policies from
# /usr/share/dbus-1/system.d (the distribution's) and /etc/dbus-1/system.d (the administrator's).
dbus_policy_dir=/etc/dbus-1/system.d
[ "$prefix" = /usr ] && dbus_policy_dir=/usr/share/dbus-1/system.d
put 0644 dbus/herald-avahi.conf "$dbus_policy_dir/herald-avahi.conf"
# D-Bus activation of the name, through systemd's alias dbus-org.freedesktop.Avahi.service (avahi-takeover points it
# at heraldd). The bus reads activation files from /usr/local/share, /usr/share and /lib; a /usr install uses /lib,
# beside (not over) the file of an installed avahi-daemon, which says the same.
dbus_activation_dir=$prefix/share/dbus-1/system-services
[ "$prefix" = /usr ] && dbus_activation_dir=/lib/dbus-1/system-services
put 0644 dbus/org.freedesktop.Avahi.service "$dbus_activation_dir/org.freedesktop.Avahi.service"

for file in services.d/*; do
    put 0644 "$file" "$prefix/share/herald/services.d/$(basename "$file")"
done
# Shell completions, generated by the installed binaries themselves (swift-argument-parser).
for tool in herald heraldd; do
    put_text 0644 "$prefix/share/bash-completion/completions/$tool" < <("$bin_dir/$tool" --generate-completion-script bash)
    put_text 0644 "$prefix/share/zsh/site-functions/_$tool" < <("$bin_dir/$tool" --generate-completion-script zsh)
    put_text 0644 "$prefix/share/fish/vendor_completions.d/$tool.fish" < <("$bin_dir/$tool" --generate-completion-script fish)
done
# Manual pages: herald(1) and heraldd(8) generated from the commands' help (Scripts/generate-man-pages.sh),
# heraldd.conf(5) written by hand.
put 0644 docs/man/herald.1 "$prefix/share/man/man1/herald.1"
put 0644 docs/man/heraldd.8 "$prefix/share/man/man8/heraldd.8"
put 0644 docs/man/heraldd.conf.5 "$prefix/share/man/man5/heraldd.conf.5"

# The configuration is the administrator's: installed once, never overwritten, not removed by --uninstall.
if [ ! -e "$destdir/etc/herald/heraldd.conf" ]; then
    install -D -m 0644 docs/heraldd.conf "$destdir/etc/herald/heraldd.conf"
fi
mkdir -p "$destdir/etc/herald/apps.d" "$destdir/etc/herald/services.d"

installed+=("$prefix/share/herald/installed-files")
mkdir -p "$(dirname "$manifest")"
printf '%s\n' "${installed[@]}" >"$manifest"
echo "installed Herald under ${destdir:-/} with prefix $prefix (${#installed[@]} files)"
if $replace_avahi; then
    ROOT="$destdir" "$destdir$prefix/lib/herald/avahi-takeover" take
fi
if [ -z "$destdir" ]; then
    echo "next: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload; systemctl enable --now heraldd"
fi
