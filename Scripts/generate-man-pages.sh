#!/usr/bin/env bash
# Regenerates docs/man/herald.1 and docs/man/heraldd.8 from the commands' own help, with the generate-manual
# plugin of swift-argument-parser (it builds the tools in debug mode; no network needed once the packages are
# resolved). Run it after changing a command, an option or a help text; the install test fails while a page
# misses an option or subcommand of the built binaries. docs/man/heraldd.conf.5 is written by hand.
#
#   bash Scripts/generate-man-pages.sh
set -euo pipefail
cd "$(dirname "$0")/.."

outputs=.build/plugins/GenerateManual/outputs
date=$(date -u +%F)
# The generator's pages need a few touches: mdoc wants .Pp rather than blank lines between paragraphs; a
# SEE ALSO section links the pages; and heraldd has no subcommands, so neither its synopsis nor its option
# list may announce one.
tidy() {  # tidy FILE SEE-ALSO-LINES
    sed -e 's/^$/.Pp/' -e "s|^\.Sh AUTHORS\$|.Sh \"SEE ALSO\"\n$2\n.Sh AUTHORS|" "$1"
}

swift package --disable-sandbox generate-manual --configuration debug --section 1 --date "$date" \
    --authors "The Herald developers" >/dev/null
tidy "$outputs/herald/herald.1" '.Xr heraldd 8 ,\n.Xr heraldd.conf 5' >docs/man/herald.1
swift package --disable-sandbox generate-manual --configuration debug --section 8 --date "$date" \
    --authors "The Herald developers" >/dev/null
tidy "$outputs/heraldd/heraldd.8" '.Xr herald 1 ,\n.Xr heraldd.conf 5 ,\n.Xr nsswitch.conf 5' \
    | sed -e '/^\.Ar subcommand$/d' -e '/^\.It Em help$/,/^\.El$/d' >docs/man/heraldd.8
echo "wrote docs/man/herald.1 and docs/man/heraldd.8"
