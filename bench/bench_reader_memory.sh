#!/usr/bin/env bash
# Resident bytes per event of the reader: `opprof summary` on a generated
# gzip'd Chrome trace of N events (repeated names; bench_model_memory trace),
# (peak RSS - the RSS of `opprof --help`) / N, from /usr/bin/time. Target
# from issue 18: <= 48 bytes per event at 20M events.
#   bench/bench_reader_memory.sh [BUILD_DIR [N [THREADS]]]   (default build 20000000 1)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-20000000}
threads=${3:-1}
trace=/tmp/opprof_bench_reader_$$.json.gz
trap 'rm -f "$trace" /tmp/opprof_bench_reader_time_$$' EXIT
"$build/bin/bench_model_memory" trace "$n" "$trace" "$threads" >/dev/null
rss() {
  /usr/bin/time -f '%M' -o /tmp/opprof_bench_reader_time_$$ "$@" >/dev/null
  cat /tmp/opprof_bench_reader_time_$$
}
base=$(rss "$build/bin/opprof" --help)
peak=$(rss "$build/bin/opprof" summary "$trace")
awk -v n="$n" -v b="$base" -v p="$peak" -v th="$threads" 'BEGIN {
  bpe = (p - b) * 1024 / n
  printf "bench_reader_memory: opprof summary, %d events on %d thread(s): peak RSS %.1f MiB (baseline %.1f MiB)\n",
         n, th, p / 1024, b / 1024
  printf "  %.1f bytes per event (target <= 48: %s)\n", bpe, bpe <= 48 ? "met" : "NOT met"
}'
