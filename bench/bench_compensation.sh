#!/usr/bin/env bash
# Overhead compensation against a sampling profiler: each function's self
# time in bench_wholeprog's program (wholeprog_work: 30.1M calls of a
# ~10 ns leaf), as `opprof exec` tables it from the -finstrument-functions
# build, with compensation (the default) and without (--no-compensate),
# against `perf record -e cpu-clock` of the same source built without
# instrumentation (each function's samples' periods: its CPU time). Medians
# of R rounds per figure, all in one run; the ratio opprof / perf per
# function (target: within 20%, i.e. 0.80-1.20, for the functions that
# hold at least 1% of perf's samples).
#   bench/bench_compensation.sh [BUILD_DIR [ROUNDS]]   (default build 3)
# Needs perf (linux-perf) and a kernel that lets this user sample its own
# processes (perf_event_paranoid <= 2). opprof times are wall-clock times
# of the ranges, so a loaded machine inflates them; the load is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/timing.sh
build=${1:-build}
rounds=${2:-3}
opprof="$build/bin/opprof"
work="$build/bin/wholeprog_work"
command -v perf >/dev/null || { echo "bench_compensation: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$opprof" ] && [ -x "$work" ] || { echo "bench_compensation: build $build first (make build)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/opprof_bench_comp_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -g bench/wholeprog_work.c -o "$tmp/plain"

echo "bench_compensation: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores," \
  "$(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $rounds rounds, medians"

funcs="leaf block mid heavy run main"
for ((r = 0; r < rounds; r++)); do
  perf record -q -e cpu-clock -F 4000 -o "$tmp/perf.data" "$tmp/plain" >/dev/null 2>&1
  perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio -F period,sym 2>/dev/null |
    awk '!/^#/ && NF >= 3 && $2 == "[.]" { print $3, $1 / 1e9 }' >"$tmp/perf.$r"
  "$opprof" exec --table "$tmp/on.$r" --format csv -- "$work" >/dev/null
  "$opprof" exec --no-compensate --table "$tmp/off.$r" --format csv -- "$work" >/dev/null
done
"$opprof" exec --table - -- "$work" 2>&1 >/dev/null | grep '^Overhead compensation' || true

perf_of() { for ((r = 0; r < rounds; r++)); do awk -v f="$1" '$1 == f { s += $2 } END { print s + 0 }' "$tmp/perf.$r"; done | bench_median; }
opprof_of() { for ((r = 0; r < rounds; r++)); do awk -F, -v f="$1" '$1 == f { print $3 / 1e6 }' "$tmp/$2.$r"; done | bench_median; }
perf_total=0
for f in $funcs; do perf_total=$(awk -v a="$perf_total" -v b="$(perf_of "$f")" 'BEGIN { print a + b }'); done
printf '%-8s %12s %14s %8s %14s %8s %7s\n' function "perf self s" "compensated s" ratio "uncompensated" ratio "target"
for f in $funcs; do
  p=$(perf_of "$f") on=$(opprof_of "$f" on) off=$(opprof_of "$f" off)
  big=$(awk -v p="$p" -v t="$perf_total" 'BEGIN { print (t > 0 && p >= 0.01 * t) ? 1 : 0 }')
  awk -v f="$f" -v p="$p" -v on="$on" -v off="$off" -v big="$big" 'BEGIN {
    r1 = p > 0 ? on / p : 0; r2 = p > 0 ? off / p : 0
    printf "%-8s %12.3f %14.3f %7.2fx %14.3f %7.2fx %7s\n", f, p, on, r1, off, r2, big ? "0.8-1.2" : "-" }'
done
