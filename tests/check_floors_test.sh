#!/bin/sh
# scripts/check_floors.py fails when a rule of docs/DESIGN.md is broken: a copy
# of the tree passes, then each breach planted in a copy is named.
#   check_floors_test.sh SOURCE_DIR
set -eu
src=${1:?source dir}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opprof-floors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
check() { python3 "$src/scripts/check_floors.py" --root "$tmp" >"$tmp/out" 2>&1; }

mkdir -p "$tmp/docs"
cp "$src/docs/DESIGN.md" "$tmp/docs/"
cp -r "$src/src" "$src/nn" "$src/cli" "$tmp/"
mkdir -p "$tmp/tests/import" && touch "$tmp/tests/import/CMakeLists.txt"
check || { cat "$tmp/out"; echo "FAIL: the tree as it is breaks a rule"; exit 1; }

expect() { # expect TEXT: the check fails and names TEXT
    if check; then echo "FAIL: passed with $1 planted"; exit 1; fi
    grep -qF "$1" "$tmp/out" || { cat "$tmp/out"; echo "FAIL: '$1' not named"; exit 1; }
}
echo '#include "model/model.h"' >>"$tmp/src/capture/pool.c"
expect 'src/capture/pool.c: includes model/model.h, a floor above src/capture'
cp "$src/src/capture/pool.c" "$tmp/src/capture/pool.c"

echo '#include "capture/reserve.h"' >>"$tmp/src/model/gate.c"
expect 'src/model/gate.c: the analysis library includes capture/reserve.h'
cp "$src/src/model/gate.c" "$tmp/src/model/gate.c"

sed -i 's|^#endif|OP_SEAM void op_planted(void);\n#endif|' "$tmp/src/capture/pool.h"
expect 'src/capture/pool.h: op_planted is marked OP_SEAM'
cp "$src/src/capture/pool.h" "$tmp/src/capture/pool.h"

sed -i 's|^capture/pool.h .*|capture/pool.h       op_chunk_decoded op_planted|' "$tmp/docs/DESIGN.md"
expect 'lists op_planted in src/capture/pool.h, which does not mark it OP_SEAM'
cp "$src/docs/DESIGN.md" "$tmp/docs/DESIGN.md"

echo '#include "capture/state.h"' >>"$tmp/cli/main.c"
expect 'cli/main.c: includes capture/state.h; cli/ uses the public API only'
cp "$src/cli/main.c" "$tmp/cli/main.c"

touch "$tmp/tests/test_import_planted.c"
expect 'tests/test_import_planted.c: area import has a folder'
rm "$tmp/tests/test_import_planted.c"

check || { cat "$tmp/out"; echo "FAIL: the restored tree breaks a rule"; exit 1; }
echo "check_floors_test: every planted breach named"
