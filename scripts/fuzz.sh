#!/usr/bin/env bash
# Builds and runs the trace reader's libFuzzer target (clang-14 with
# Debian's libclang-rt-14-dev, ASan + UBSan).
#   scripts/fuzz.sh build              build build-fuzz/fuzz_import
#   scripts/fuzz.sh run [SECONDS]      build, seed build-fuzz/corpus, fuzz (default 600 s, one job)
#   scripts/fuzz.sh keep               add to fuzz/corpus the inputs of build-fuzz/corpus that reach
#                                      code the tracked inputs do not (libFuzzer's -merge=1)
# The seeds are the tracked corpus (fuzz/corpus, which ctest replays as
# test_fuzz_import_replay; fuzz/shapes.py writes into it small seeds of the
# hostile shapes of test_import_bounds), the hostile-trace corpus of the tests (refused and
# accepted), the shared fixtures (OPPROF_FIXTURES, default ../shared/fixtures)
# and small cuts of a Kineto trace.
# CMake builds the same binary with clang and -DOPPROF_BUILD_FUZZER=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
fixtures=${OPPROF_FIXTURES:-../shared/fixtures}
CC=${CC:-clang-14}

build() {
  scripts/deps.sh fuzz
  mkdir -p "$out"
  # The library is built as CMake builds it (OPPROF_BUILDING_LIBRARY: real calls, not the inline fast paths),
  # less the HTML report, whose page CMake generates as C and which the reader never reaches.
  # shellcheck disable=SC2046
  "$CC" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOPPROF_BUILDING_LIBRARY -Iinclude -Isrc $(find src -name '*.c' -not -path 'src/report/*' | sort) \
    fuzz/fuzz_import.c \
    -lunwind -ldw -lelf -lz -ldeflate -lm -lpthread -o "$out/fuzz_import"
}

seed() {
  local c=$out/corpus
  mkdir -p "$c"
  cp fuzz/corpus/* tests/import/malformed/*.json* tests/import/accepted/*.json* "$c"/ 2>/dev/null || true
  cp tests/import/pftrace/*.pftrace "$c"/ 2>/dev/null || true # Perfetto protobuf: the reader sniffs it
  if [ -d "$fixtures" ]; then
    cp "$fixtures"/torch-traces/*.trace.json "$c"/ 2>/dev/null || true
    for f in "$fixtures"/kineto/*.json.gz; do
      [ "$(stat -c %s "$f")" -lt 65536 ] && cp "$f" "$c"/
      # cuts of the decompressed trace: a head, closed by hand, and a slice of events
      zcat "$f" | head -c 16384 > "$c/$(basename "$f" .json.gz).head.json" || true
      zcat "$f" | grep -m 40 '"ph": "X"' | sed '1s/^/[/; $s/,\?$/]/' > "$c/$(basename "$f" .json.gz).events.json" || true
    done
  fi
}

# The tracked inputs go into a scratch folder first, so that only what
# adds to them (and to the test inputs ctest replays too) is kept.
keep() {
  local t=$out/keep
  rm -rf "$t" && mkdir -p "$t"
  cp fuzz/corpus/* tests/import/malformed/* tests/import/accepted/* tests/import/pftrace/* "$t"/
  local before
  before=$(ls "$t")
  "$out/fuzz_import" -merge=1 -max_len=65536 -rss_limit_mb=2048 -timeout=10 "$t" "$out/corpus"
  for f in $(comm -13 <(echo "$before" | sort) <(ls "$t" | sort)); do cp "$t/$f" fuzz/corpus/; done
  echo "fuzz/corpus: $(ls fuzz/corpus | wc -l) inputs"
}

case "${1:-run}" in
  build) build ;;
  keep) [ -x "$out/fuzz_import" ] || build; keep ;;
  run)
    secs=${2:-600}
    build
    seed
    mkdir -p "$out/artifacts"
    # From inside build-fuzz: with -jobs libFuzzer writes its fuzz-N.log to the current folder.
    cd "$out"
    ./fuzz_import corpus -dict=../fuzz/trace.dict -jobs=1 -workers=1 -max_len=65536 -rss_limit_mb=2048 \
      -timeout=10 -max_total_time="$secs" -print_final_stats=1 -artifact_prefix=artifacts/
    cat fuzz-0.log 2>/dev/null | tail -n 12 || true ;;
  *) echo "usage: $0 build | run [SECONDS] | keep" >&2; exit 2 ;;
esac
