// No interface: this module only runs a step of herald's start before main() (see early.c).
#ifndef C_HERALD_EARLY_H
#define C_HERALD_EARLY_H
#endif
