// sd-bus, the D-Bus library of libsystemd, for heraldd's bus shell (Sources/HeraldDaemon/DBus).
#include <systemd/sd-bus.h>
