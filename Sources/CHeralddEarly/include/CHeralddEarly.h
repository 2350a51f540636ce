// No interface: this module only runs a step of heraldd's start before main() (see early.c).
#ifndef C_HERALDD_EARLY_H
#define C_HERALDD_EARLY_H
#endif
