#!/usr/bin/env bash
# `opprof summary` against ../shared/tools/ref_summary.py on the uncompressed
# nccl_data Kineto trace, end to end (read, group, print), in the same run:
# median wall time of each, MB/s of JSON, the ratio, and peak RSS from
# /usr/bin/time against the file size; also the CPU time of each, which
# other programs on a shared machine disturb less than wall time. Targets: >= 10x, >= 300 MB/s,
# peak RSS <= 2x the file.
#   bench/bench_summary.sh [BUILD_DIR]     (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
fixtures=${OPPROF_FIXTURES:-../shared/fixtures}
ref=${OPPROF_REF:-../shared/tools/ref_summary.py}
trace=/tmp/opprof_bench_nccl_data.json
zcat "$fixtures/kineto/nccl_data.json.gz" > "$trace"
bytes=$(stat -c %s "$trace")
opprof=$build/bin/opprof
runs=${RUNS:-11}

# Peak RSS (KiB) of one run, from /usr/bin/time.
rss() {
  /usr/bin/time -f '%M' -o /tmp/opprof_bench_time "$@" >/dev/null
  cat /tmp/opprof_bench_time
}

# Median wall times from hyperfine (no shell between, a few warm-up runs).
hyperfine -N -w 2 -r "$runs" --export-csv /tmp/opprof_bench_summary.csv \
  "$opprof summary $trace --format csv" "python3 $ref $trace" >/dev/null
o=$(awk -F, 'NR == 2 {print $4}' /tmp/opprof_bench_summary.csv)
r=$(awk -F, 'NR == 3 {print $4}' /tmp/opprof_bench_summary.csv)
ocpu=$(awk -F, 'NR == 2 {print $5 + $6}' /tmp/opprof_bench_summary.csv) # mean user + system
rcpu=$(awk -F, 'NR == 3 {print $5 + $6}' /tmp/opprof_bench_summary.csv)
our_rss=$(rss "$opprof" summary "$trace" --format csv)
ref_rss=$(rss python3 "$ref" "$trace")
awk -v o="$o" -v r="$r" -v oc="$ocpu" -v rc="$rcpu" -v b="$bytes" -v orss="$our_rss" -v rrss="$ref_rss" -v n="$runs" 'BEGIN {
  printf "bench_summary: %s, %.2f MB (medians of %d runs each; shared machine)\n", "'"$trace"'", b / 1e6, n
  printf "  opprof summary     %8.1f ms  %7.1f MB/s   peak RSS %6.1f MB = %.2fx the file\n", o * 1e3, b / 1e6 / o, orss / 1024, orss * 1024 / b
  printf "  ref_summary.py     %8.1f ms  %7.1f MB/s   peak RSS %6.1f MB\n", r * 1e3, b / 1e6 / r, rrss / 1024
  printf "  CPU time (user+sys, means): opprof %.1f ms, ref %.1f ms: %.1fx; %.0f MB/s of CPU time\n", oc * 1e3, rc * 1e3, rc / oc, b / 1e6 / oc
  printf "  ratio: opprof summary is %.1fx faster (target >= 10x); %.0f MB/s (target >= 300); RSS %.2fx (target <= 2x)\n", r / o, b / 1e6 / o, orss * 1024 / b
}'
