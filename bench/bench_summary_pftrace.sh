#!/usr/bin/env bash
# `opprof summary` of a .pftrace, the key averages folded as the file is read
# (opprof_trace_load_table) against the same command reading the whole event
# model (OPPROF_READ_FOLD=0, the path before the fold), in the same run, on
# the same file: wall and CPU time, slices per second, peak RSS, the ratios,
# and that both print the same table. The trace is bench_wholeprog's program
# (wholeprog_work, 30.1M calls) recorded with `opprof exec --trace`, unless
# one is given. The fold is also timed inflating each batch in place
# (OPPROF_READ_AHEAD=0) rather than ahead on a thread of its own. SLICES=N
# makes the trace of a streamed session of N ranges instead (streamed_work;
# SLICES=120000000 for the issue's 120M-slice figure). Targets (issue 27): <= 64 MB resident, >= 20M slices/s.
#   bench/bench_summary_pftrace.sh [BUILD_DIR [TRACE.pftrace]]   (default build, a fresh trace)
#   RUNS=N (default 3): runs of each, the median of each figure printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/timing.sh
build=${1:-build}
opprof=$build/bin/opprof
runs=${RUNS:-3}
tmp=$(mktemp -d /tmp/opprof_bench_sumpf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trace=${2:-}
if [ -z "$trace" ] && [ -n "${SLICES:-}" ]; then
  trace=$tmp/streamed.pftrace
  "$build/bin/streamed_work" "$trace" "$SLICES" || exit 1
elif [ -z "$trace" ]; then
  trace=$tmp/wholeprog.pftrace
  "$opprof" exec --trace "$trace" -- "$build/bin/wholeprog_work" >/dev/null 2>"$tmp/exec.err" ||
    { cat "$tmp/exec.err" >&2; exit 1; }
fi
bytes=$(stat -c %s "$trace")
slices=$("$opprof" summary "$trace" --format csv | awk -F, 'NR > 1 {n += $2} END {print n}')

# One run: "wall user+sys maxrss_kib" of `opprof summary TRACE`, its output kept in $tmp/out.$1.
measure() {
  local tag=$1
  shift
  bench_time "$tmp/out.$tag" env "$@" "$opprof" summary "$trace"
}
: >"$tmp/fold"
: >"$tmp/inplace"
: >"$tmp/model"
for _ in $(seq "$runs"); do # interleaved, so that the machine's load falls on all alike
  measure fold OPPROF_READ_FOLD=1 >>"$tmp/fold"
  measure inplace OPPROF_READ_FOLD=1 OPPROF_READ_AHEAD=0 >>"$tmp/inplace"
  measure model OPPROF_READ_FOLD=0 >>"$tmp/model"
done
cmp -s "$tmp/out.fold" "$tmp/out.model" || { echo "the tables differ:" >&2; diff "$tmp/out.model" "$tmp/out.fold" >&2; exit 1; }
cmp -s "$tmp/out.fold" "$tmp/out.inplace" || { echo "the tables differ:" >&2; diff "$tmp/out.inplace" "$tmp/out.fold" >&2; exit 1; }
col() { bench_col "$tmp/$1" "$2"; }
fw=$(col fold 1) fc=$(col fold 2) fr=$(col fold 3)
mw=$(col model 1) mc=$(col model 2) mr=$(col model 3)
iw=$(col inplace 1) ic=$(col inplace 2) ir=$(col inplace 3)
awk -v n="$slices" -v b="$bytes" -v fw="$fw" -v fc="$fc" -v fr="$fr" -v mw="$mw" -v mc="$mc" -v mr="$mr" \
    -v iw="$iw" -v ic="$ic" -v ir="$ir" \
    -v runs="$runs" -v t="$trace" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v cpus="$(nproc)" 'BEGIN {
  printf "bench_summary_pftrace: %s, %.1f MB, %d slices; medians of %d runs; %d CPUs, load %s\n", t, b / 1e6, n, runs, cpus, load
  printf "  %-22s %8s %8s %10s %14s %14s\n", "", "wall s", "CPU s", "peak RSS", "slices/s wall", "slices/s CPU"
  printf "  %-22s %8.2f %8.2f %7.1f MB %13.1fM %13.1fM\n", "fold (opprof summary)", fw, fc, fr / 1024, n / fw / 1e6, n / fc / 1e6
  printf "  %-22s %8.2f %8.2f %7.1f MB %13.1fM %13.1fM\n", "fold, inflating in place", iw, ic, ir / 1024, n / iw / 1e6, n / ic / 1e6
  printf "  %-22s %8.2f %8.2f %7.1f MB %13.1fM %13.1fM\n", "model (READ_FOLD=0)", mw, mc, mr / 1024, n / mw / 1e6, n / mc / 1e6
  printf "  ratio in place/ahead: wall %.2fx, CPU %.2fx\n", iw / fw, ic / fc
  printf "  ratio model/fold: wall %.1fx, CPU %.1fx, peak RSS %.0fx; the same table\n", mw / fw, mc / fc, mr / fr
  printf "  targets: <= 64 MB resident: %s; >= 20M slices/s (wall): %s\n", (fr / 1024 <= 64 ? "met" : "NOT met"), (n / fw >= 20e6 ? "met" : "NOT met")
}'
