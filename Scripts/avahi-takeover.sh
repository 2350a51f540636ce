#!/bin/sh
# Lets heraldd take avahi-daemon's place on this system, or gives the place back.
#
#   avahi-takeover take        stop and mask avahi-daemon; heraldd serves libnss-mdns's socket
#                              (/run/avahi-daemon/socket) and publishes /etc/avahi/services too
#   avahi-takeover give-back   undo exactly that: unmask avahi-daemon and start it again if it ran before
#   avahi-takeover status      say which daemon holds the place
#
# Installed as /usr/lib/herald/avahi-takeover by the Debian package (whose removal gives the place back) and by
# `Scripts/install.sh --replace-avahi`. Avahi's D-Bus name (org.freedesktop.Avahi) goes to heraldd with the
# place: heraldd asks for it whenever a system bus is reachable ([dbus] in heraldd.conf), with avahi-daemon
# masked nothing else claims it, and D-Bus activation of the name starts heraldd (the alias below).
#
# What `take` changed is written to $STATE (so `give-back` restores what was there, and only that); the heraldd
# side is one systemd drop-in, $DROPIN. Safe to run twice. ROOT (environment) prefixes every path, for tests.
set -eu

root=${ROOT:-}
state=$root/var/lib/herald/avahi-takeover
dropin_dir=$root/etc/systemd/system/heraldd.service.d
dropin=$dropin_dir/avahi-takeover.conf
# heraldd beside this script's install: PREFIX/lib/herald/avahi-takeover → PREFIX/bin/heraldd.
prefix=$(cd "$(dirname "$0")/../.." && pwd)
heraldd=${HERALDD:-${prefix#"$root"}/bin/heraldd}
avahi_units="avahi-daemon.service avahi-daemon.socket"
# The alias D-Bus activation of org.freedesktop.Avahi starts (dbus/org.freedesktop.Avahi.service, and Avahi's own
# activation file): `take` points it at heraldd's unit, `give-back` back at what it named before.
activation_alias=$root/etc/systemd/system/dbus-org.freedesktop.Avahi.service

say() { echo "avahi-takeover: $*"; }

# heraldd's unit file as systemd finds it (the administrator's, then the distribution's), without ROOT.
heraldd_unit() {
    for dir in /etc/systemd/system /usr/local/lib/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
        if [ -f "$root$dir/heraldd.service" ]; then
            echo "$dir/heraldd.service"
            return 0
        fi
    done
    return 1
}

# systemctl only where systemd runs (not in a chroot or a container without it): the files are written anyway
# and take effect at the next boot.
systemd_running() { [ -z "$root" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

unit_known() { systemctl cat "$1" >/dev/null 2>&1; }

take() {
    if [ -e "$state" ]; then
        say "heraldd already holds Avahi's place (since $(sed -n 's/^taken=//p' "$state")); nothing to do"
        return 0
    fi
    was_active=no
    was_enabled=no
    if systemd_running && unit_known avahi-daemon.service; then
        systemctl -q is-active avahi-daemon.service && was_active=yes
        systemctl -q is-enabled avahi-daemon.service 2>/dev/null && was_enabled=yes
        # shellcheck disable=SC2086
        systemctl stop $avahi_units 2>/dev/null || true
    fi
    mkdir -p "$(dirname "$state")" "$dropin_dir"
    {
        echo "taken=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "avahi_was_active=$was_active"
        echo "avahi_was_enabled=$was_enabled"
        echo "activation_alias_was=$(readlink "$activation_alias" 2>/dev/null || true)"
    } >"$state.new"
    mv "$state.new" "$state"
    if unit=$(heraldd_unit); then
        mkdir -p "$(dirname "$activation_alias")"
        ln -sfn "$unit" "$activation_alias"
    else
        say "no heraldd.service found: D-Bus activation of org.freedesktop.Avahi is left as it was"
    fi
    if systemd_running; then
        # shellcheck disable=SC2086
        systemctl mask -q $avahi_units
    else
        mkdir -p "$root/etc/systemd/system"
        for unit in $avahi_units; do ln -sf /dev/null "$root/etc/systemd/system/$unit"; done
    fi
    cat >"$dropin.new" <<EOF
# Written by /usr/lib/herald/avahi-takeover take; removed by avahi-takeover give-back.
# heraldd in avahi-daemon's place: libnss-mdns's socket, and Avahi's static service files.
[Service]
RuntimeDirectory=avahi-daemon
ExecStart=
ExecStart=$heraldd --nss-socket /run/avahi-daemon/socket --services-dir /etc/herald/services.d --services-dir /etc/avahi/services
EOF
    mv "$dropin.new" "$dropin"
    if systemd_running; then
        systemctl daemon-reload
        systemctl try-restart heraldd.service
    fi
    say "heraldd now holds Avahi's place (avahi-daemon masked; it was $( [ $was_active = yes ] && echo running || echo stopped )); undo with: avahi-takeover give-back"
}

give_back() {
    if [ ! -e "$state" ]; then
        say "heraldd does not hold Avahi's place; nothing to give back"
        return 0
    fi
    was_active=$(sed -n 's/^avahi_was_active=//p' "$state")
    was_enabled=$(sed -n 's/^avahi_was_enabled=//p' "$state")
    alias_was=$(sed -n 's/^activation_alias_was=//p' "$state")
    if [ -n "$alias_was" ]; then
        ln -sfn "$alias_was" "$activation_alias"
    elif [ -L "$activation_alias" ] && [ "$(basename "$(readlink "$activation_alias")")" = heraldd.service ]; then
        rm -f "$activation_alias"
    fi
    rm -f "$dropin"
    rmdir "$dropin_dir" 2>/dev/null || true
    if systemd_running; then
        # shellcheck disable=SC2086
        systemctl unmask -q $avahi_units
        systemctl daemon-reload
        systemctl try-restart heraldd.service
        if unit_known avahi-daemon.service; then
            [ "$was_enabled" = yes ] && systemctl enable -q avahi-daemon.service
            [ "$was_active" = yes ] && systemctl start avahi-daemon.service
        fi
    else
        for unit in $avahi_units; do
            link=$root/etc/systemd/system/$unit
            if [ -L "$link" ] && [ "$(readlink "$link")" = /dev/null ]; then rm -f "$link"; fi
        done
    fi
    rm -f "$state"
    say "Avahi's place is given back (avahi-daemon unmasked$( [ "$was_active" = yes ] && echo ' and started'))"
}

status() {
    if [ -e "$state" ]; then
        say "heraldd holds Avahi's place ($(sed -n 's/^taken=/since /p' "$state"))"
    else
        say "heraldd does not hold Avahi's place"
    fi
}

case "${1:-}" in
    take) take ;;
    give-back) give_back ;;
    status) status ;;
    *)
        echo "usage: avahi-takeover take | give-back | status" >&2
        exit 64
        ;;
esac
