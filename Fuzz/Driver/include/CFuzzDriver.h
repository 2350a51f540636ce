#ifndef HERALD_CFUZZDRIVER_H
#define HERALD_CFUZZDRIVER_H

/// Hands the process to libFuzzer (its LLVMFuzzerRunDriver, with the target's LLVMFuzzerTestOneInput) and returns its
/// exit status; returns -1 at once when libFuzzer is not linked in (an ordinary build of a fuzz target).
int herald_fuzz_run_driver(int argc, char **argv);

#endif
