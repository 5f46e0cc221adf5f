#!/usr/bin/env bash
# The HTML report of big traces (issue 27: <= 25 MB that headless Chromium
# draws in <= 3 s at 20M events): a synthetic trace of 20M events (4 threads,
# nesting 6 deep, tests/report_synth) and bench_wholeprog's program recorded
# with `opprof exec --trace` (30.1M slices) and reported with `opprof report`.
# For each: the HTML's size, the time and peak memory of writing it, the
# slices on the page and what was merged, and the first draw of the
# overview and of the timeline in headless Chromium (tests/report_draw,
# three tries each, every try printed, the best counted), with a screenshot
# of the timeline.
#   bench/bench_report_scale.sh [BUILD_DIR [EVENTS]]   (default build, 20000000)
#   KEEP=DIR keeps the reports and screenshots there.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/timing.sh
build=${1:-build}
events=${2:-20000000}
opprof=$build/bin/opprof
for exe in "$opprof" "$build/bin/wholeprog_work" "$build/tests/report_synth" "$build/tests/report_draw"; do
  [ -x "$exe" ] || { echo "bench_report_scale: $exe is missing (make build)" >&2; exit 1; }
done
[ -x "${OPPROF_CHROMIUM:-/usr/bin/chromium}" ] || { echo "bench_report_scale: no Chromium (scripts/deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/opprof_bench_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=${KEEP:-$tmp}
mkdir -p "$out"

# One case: "name html write-output-file" after the report was written.
report_case() {
  local name=$1 html=$2 timing=$3
  local bytes lod best_o best_t
  bytes=$(stat -c %s "$html")
  lod=$(grep -o '"lod":{[^}]*}' "$html" | head -1 || true)
  "$build/tests/report_draw" "$html" --screenshot "$out/$name.png" view=overview view=timeline >"$tmp/$name.draw"
  sed 's/^/    /' "$tmp/$name.draw"
  best_o=$(awk '/^view=overview best:/ {print $3}' "$tmp/$name.draw")
  best_t=$(awk '/^view=timeline best:/ {print $3}' "$tmp/$name.draw")
  awk -v name="$name" -v b="$bytes" -v w="$timing" -v lod="${lod:-none}" -v o="$best_o" -v t="$best_t" 'BEGIN {
    split(w, f, " ")
    printf "  %s: HTML %.1f MB, written in %.2f s (CPU %.2f s, peak RSS %.0f MB)\n", name, b / 1e6, f[1], f[2], f[3] / 1024
    printf "    page: %s\n", lod
    printf "    first draw: overview %d ms, timeline %d ms\n", o, t
    printf "    targets: HTML <= 25 MB: %s; drawn in <= 3 s: %s\n", (b <= 25e6 ? "met" : "NOT met"), (o <= 3000 && t <= 3000 ? "met" : "NOT met")
  }'
}

printf 'bench_report_scale: %d CPUs, load %s, %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$("${OPPROF_CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | head -1)"

w=$(bench_time "$tmp/synth.out" "$build/tests/report_synth" "$out/synthetic.html" "$events")
echo "  synthetic ($events events): $(cat "$tmp/synth.out")"
report_case synthetic "$out/synthetic.html" "$w"

"$opprof" exec --trace "$tmp/wholeprog.pftrace" -- "$build/bin/wholeprog_work" >/dev/null 2>"$tmp/exec.err" ||
  { cat "$tmp/exec.err" >&2; exit 1; }
w=$(bench_time "$tmp/report.out" "$opprof" report "$tmp/wholeprog.pftrace" -o "$out/wholeprog.html")
echo "  wholeprog_work's .pftrace: $(stat -c %s "$tmp/wholeprog.pftrace" | awk '{printf "%.1f MB", $1 / 1e6}')"
report_case wholeprog "$out/wholeprog.html" "$w"
[ -n "${KEEP:-}" ] && echo "  reports and screenshots in $out"
exit 0
