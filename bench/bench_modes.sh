#!/usr/bin/env bash
# "Which mode do I want": the cost of each way of profiling one program,
# measured on the same program in one run: wholeprog_work (bench_wholeprog's
# program: 30.1M calls of a ~10 ns function built with -finstrument-functions,
# the worst case for per-call cost) under opprof exec in each mode, against
# the program run plain. Each mode's median wall time and median CPU time
# (user + system, all threads: what the machine pays, less moved by other
# work on it than wall time) of R rounds, each as a ratio to plain's, and its
# largest peak RSS; the output's size where there is one.
#   bench/bench_modes.sh [BUILD_DIR [ROUNDS]]   (default build 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
work="$build/bin/wholeprog_work"
opprof="$build/bin/opprof"
tmp=$(mktemp -d /tmp/opprof_bench_modes_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Runs a command R times: "median_wall_s median_cpu_s max_rss_kb".
measure() {
  local walls=() cpus=() rss=0
  for ((r = 0; r < rounds; r++)); do
    rm -f "$tmp"/out.*
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
      echo "bench_modes: failed: $*" >&2; cat "$tmp/err" >&2; exit 1; }
    read -r t u s k <"$tmp/time"
    walls+=("$t")
    cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
    ((k > rss)) && rss=$k
  done
  local w c
  w=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  c=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "$w $c $rss"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

size_of() { # the output a mode wrote, if any
  local f
  for f in "$tmp"/out.*; do
    [ -e "$f" ] && { stat -c %s "$f" | awk '{ if ($1 < 1e6) printf "%.1f KB", $1 / 1e3; else printf "%.1f MB", $1 / 1e6 }'; return; }
  done
  echo "-"
}

echo "bench_modes: $work (30.1M calls), $rounds rounds each, median wall time and the largest peak RSS;" \
  "load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
row() { # label wall cpu rss wall_ref cpu_ref output
  printf '  %-52s %7.2f s %7s %7.2f s %7s %7s MB  %s\n' "$1" "$2" "$(ratio "$2" "$5")" "$3" "$(ratio "$3" "$6")" \
    "$(mib "$4")" "$7"
}
printf '  %-52s %9s %7s %9s %7s %10s  %s\n' "mode (opprof exec ...)" "wall" "x plain" "CPU" "x plain" "peak RSS" "output"
read -r plain plain_cpu plain_rss < <(measure "$work")
row "plain (no opprof)" "$plain" "$plain_cpu" "$plain_rss" "$plain" "$plain_cpu" "-"
run_mode() { # label, then exec options
  local label=$1
  shift
  read -r t c k < <(measure "$opprof" exec "$@" -- "$work")
  row "$label" "$t" "$c" "$k" "$plain" "$plain_cpu" "$(size_of)"
}
run_mode "table only (--table F)" --table "$tmp/out.txt"
run_mode "table + flame graph (--stacks F)" --stacks "$tmp/out.folded"
run_mode "trace, Perfetto (--trace F.pftrace)" --trace "$tmp/out.pftrace"
run_mode "trace, Chrome JSON (--trace F.json.gz)" --trace "$tmp/out.json.gz"
run_mode "table, call stacks (--with-stack --group-by-stack 3)" --with-stack --group-by-stack 3 --table "$tmp/out.txt"
run_mode "on demand, idle (--on-demand, no trigger)" --on-demand
run_mode "flight recorder (--flight 64M), no dump" --flight 64M
echo "  sampling: not in opprof (perf record -e cpu-clock samples any program)"

# When the instrumentation itself is the cost: the 30M leaf calls left out
# at run time (the hook still runs, finds the function excluded) and at
# compile time (no hook call at all), each against its own plain build.
cc -O2 -g -finstrument-functions -finstrument-functions-exclude-function-list=leaf bench/wholeprog_work.c \
  -o "$tmp/work_no_leaf"
echo "  leaf (30M calls of ~10 ns) left out, table only, each against its own plain build:"
run_mode "  at run time (--exclude leaf)" --exclude leaf --table "$tmp/out.txt"
read -r plain2 plain2_cpu plain2_rss < <(measure "$tmp/work_no_leaf")
read -r t c k < <(measure "$opprof" exec --table "$tmp/out.txt" -- "$tmp/work_no_leaf")
row "  at compile time (-finstrument-functions-exclude-" "$t" "$c" "$k" "$plain2" "$plain2_cpu" \
  "(plain: $plain2 s)"
echo "    function-list=leaf)"
