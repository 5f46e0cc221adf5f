#!/usr/bin/env bash
# opprof convert in bounded memory: peak RSS of `opprof convert` of a
# generated gzip'd Chrome trace (bench_model_memory trace: repeated names) to
# each format, at two sizes, beside `opprof summary` of the same file, which
# holds every event. Bounded: convert's peak stays the same when the trace
# grows; summary's grows with it.
#   bench/bench_convert_memory.sh [BUILD_DIR [N_SMALL [N_LARGE]]]   (default build 2000000 8000000)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
small=${2:-2000000}
large=${3:-8000000}
tmp=$(mktemp -d /tmp/opprof_bench_convert_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rss() { # peak RSS in MiB and wall seconds of a command
  /usr/bin/time -f '%M %e' -o "$tmp/time" "$@" >/dev/null
  awk '{ printf "%7.1f MiB %6.2f s", $1 / 1024, $2 }' "$tmp/time"
}
echo "bench_convert_memory: peak RSS and wall time (one run each)"
for n in "$small" "$large"; do
  "$build/bin/bench_model_memory" trace "$n" "$tmp/in.json.gz" 1 >/dev/null
  echo "  $n events, $(stat -c %s "$tmp/in.json.gz" | awk '{ printf "%.1f MB", $1 / 1e6 }') .json.gz:"
  printf "    %-30s %s\n" "summary (holds every event)" "$(rss "$build/bin/opprof" summary "$tmp/in.json.gz")"
  for out in json.gz pftrace; do
    printf "    %-30s %s\n" "convert to .$out" "$(rss "$build/bin/opprof" convert "$tmp/in.json.gz" "$tmp/out.$out")"
  done
  printf "    %-30s %s\n" "convert .pftrace to .json.gz" "$(rss "$build/bin/opprof" convert "$tmp/out.pftrace" "$tmp/back.json.gz")"
  rm -f "$tmp"/out.* "$tmp/back.json.gz"
done
