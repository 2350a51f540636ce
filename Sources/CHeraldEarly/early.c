// herald's first step, taken before main() and before the other initialisers of its own binary (in the release
// build, which links the Swift runtime in, the runtime's too): from here on, the kernel maps the pages of herald's
// code and constant data one at a time as they are first used, not 64 KiB around each (see
// herald_map_file_pages_one_by_one). Parsing the command line touches pages all over the executable (the runtime's
// protocol conformance lookups read every conformance record); mapped with their neighbours, they would keep
// megabytes more resident in each of the many `herald browse` processes a desktop may run at once. If it cannot
// be done (an older kernel), herald runs as before.
#include "CHeraldSystem.h"

__attribute__((constructor(101))) static void herald_cli_map_file_pages_one_by_one(void) {
    (void)herald_map_file_pages_one_by_one();
}
