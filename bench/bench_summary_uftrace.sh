#!/usr/bin/env bash
# `opprof summary` of a .pftrace against `uftrace report` of the same
# program's uftrace recording, in the same run (issue 27: summary faster than
# uftrace report). The program is bench_wholeprog's (wholeprog_work, 30.1M
# calls, -finstrument-functions, which uftrace records as it is). Each run of
# each command, interleaved: wall and CPU time, peak RSS; the medians and the
# ratio uftrace / opprof. Also the calls each counts for the busiest
# function, which must agree. uftrace (Debian's, 0.13) is a reference here,
# never a dependency: the script says so and stops when it is missing.
#   bench/bench_summary_uftrace.sh [BUILD_DIR]   (default build)
#   RUNS=N (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/timing.sh
build=${1:-build}
opprof=$build/bin/opprof
prog=$build/bin/wholeprog_work
runs=${RUNS:-3}
command -v uftrace >/dev/null || { echo "uftrace is not installed (apt-get install uftrace): nothing to compare" >&2; exit 1; }
tmp=$(mktemp -d /tmp/opprof_bench_sumuf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "machine load (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

"$opprof" exec --trace "$tmp/w.pftrace" -- "$prog" >/dev/null 2>"$tmp/exec.err" || { cat "$tmp/exec.err" >&2; exit 1; }
uftrace record --no-pager -d "$tmp/uftrace.data" "$prog" >/dev/null 2>"$tmp/uf.err" || { cat "$tmp/uf.err" >&2; exit 1; }
echo "trace: $(du -h "$tmp/w.pftrace" | cut -f1) .pftrace; uftrace.data: $(du -sh "$tmp/uftrace.data" | cut -f1)"

# One run: "wall cpu maxrss_kib" of the command, its output kept in $tmp/out.TAG.
measure() {
  local tag=$1
  shift
  bench_time "$tmp/out.$tag" "$@" 2>/dev/null
}
: >"$tmp/op"
: >"$tmp/uf"
for _ in $(seq "$runs"); do
  measure op "$opprof" summary "$tmp/w.pftrace" --format csv --row-limit -1 >>"$tmp/op"
  measure uf uftrace report --no-pager -d "$tmp/uftrace.data" >>"$tmp/uf"
done
ow=$(bench_col "$tmp/op" 1) oc=$(bench_col "$tmp/op" 2) orss=$(bench_col "$tmp/op" 3)
uw=$(bench_col "$tmp/uf" 1) uc=$(bench_col "$tmp/uf" 2) urss=$(bench_col "$tmp/uf" 3)
printf "opprof summary:  %6.2f s wall, %6.2f s CPU, %7.1f MB peak RSS (median of %d)\n" "$ow" "$oc" "$(echo "$orss / 1024" | bc -l)" "$runs"
printf "uftrace report:  %6.2f s wall, %6.2f s CPU, %7.1f MB peak RSS\n" "$uw" "$uc" "$(echo "$urss / 1024" | bc -l)"
printf "uftrace / opprof: %.2fx wall, %.2fx CPU (target: opprof faster, > 1x)\n" "$(echo "$uw / $ow" | bc -l)" "$(echo "$uc / $oc" | bc -l)"

# The busiest function's calls: the CSV's largest count; uftrace's Calls column.
read -r oname ocalls < <(awk -F, 'NR > 1 && $2 > n {n = $2; f = $1} END {print f, n}' "$tmp/out.op")
ucalls=$(awk -v f="$oname" '$NF == f {print $(NF - 1); exit}' "$tmp/out.uf")
echo "calls of $oname: opprof $ocalls, uftrace ${ucalls:-none}"
[ "$ocalls" = "$ucalls" ] || { echo "the call counts differ" >&2; exit 1; }
