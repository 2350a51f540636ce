// The bridge from a fuzz target's Swift main to libFuzzer. SwiftPM names an executable's Swift entry point
// `<target>_main` and makes it the program's `main` at link time, in place of libFuzzer's own, so the target's main
// starts libFuzzer itself. The declarations are weak: an ordinary build links no libFuzzer and replays files instead.

#include <stddef.h>
#include <stdint.h>

#include "CFuzzDriver.h"

extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))
    __attribute__((weak));
// Each target defines it (`@_cdecl("LLVMFuzzerTestOneInput")`).
extern int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) __attribute__((weak));

int herald_fuzz_run_driver(int argc, char **argv) {
    if (LLVMFuzzerRunDriver == NULL || LLVMFuzzerTestOneInput == NULL) {
        return -1;
    }
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
