// heraldd's first step, taken before main() and before the other initialisers of heraldd's own binary (in the
// release build, which links the Swift runtime in, the runtime's too): from here on, the kernel maps the pages of
// heraldd's code and constant data one at a time as they are first used, not 64 KiB around each (see
// herald_map_file_pages_one_by_one). Start-up and serving each touch a few hundred scattered pages of the
// executable; mapped with their neighbours, they would keep 5–7 MiB more resident (Benchmarks/README.md,
// 2026-11-27). The outcome is logged once logging is set up.
#include "CHeraldSystem.h"

__attribute__((constructor(101))) static void heraldd_map_file_pages_one_by_one(void) {
    (void)herald_map_file_pages_one_by_one();
}
