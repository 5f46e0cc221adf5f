#!/usr/bin/env bash
# Every figure in README.md, regenerated: the machine first (CPU, cores,
# memory, kernel, virtualisation, transparent huge pages, load), then each
# section's benchmark with the command that ran it, under the README's own
# heading. Each benchmark prints its ratios against a reference measured in
# the same run, so a figure copied into the README comes with the machine
# and load it was measured on.
#   bench/readme_figures.sh [BUILD_DIR [SECTION...]]     (default build, all)
# Sections: overhead compensation wholeprog-trace trace-cost modes pftrace keyavg memory
# stacks instrument threads model-memory reader-memory convert-memory
# summary summary-pftrace summary-uftrace report-scale export flight nn mpi. The GPU figures (README, "GPUs and NVTX")
# come from scripts/gpu-check.sh on a machine with one and are not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(overhead compensation wholeprog-trace trace-cost modes pftrace keyavg memory stacks
  instrument threads model-memory reader-memory convert-memory summary summary-pftrace summary-uftrace report-scale
  export flight nn mpi)
bin="$build/bin"
[ -x "$bin/opprof" ] || { echo "readme_figures: build $build first (make build)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/opprof_readme_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

machine() {
  local cpu virt thp mem
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
  virt=
  grep -q firecracker /proc/cmdline 2>/dev/null && virt="Firecracker VM"
  [ -z "$virt" ] && virt=$(systemd-detect-virt 2>/dev/null || true)
  [ -z "$virt" ] && grep -q hypervisor /proc/cpuinfo && virt="a VM"
  thp=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "?")
  echo "machine: $cpu, $(nproc) cores, $mem, Linux $(uname -r), ${virt:-bare metal}, THP $thp"
}
say() { # heading, command...
  local h=$1
  shift
  echo
  echo "== README: $h =="
  echo "\$ $* (load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%SZ))"
  "$@"
}

machine
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), sections: ${sections[*]}"
for s in "${sections[@]}"; do
  case $s in
    overhead) say "What it costs: a recorded range, first session, opprof_stop" "$bin/bench_overhead" ;;
    compensation) say "A program you did not instrument: overhead compensation" bench/bench_compensation.sh "$build" 3 ;;
    wholeprog-trace)
      for t in x.json.gz x.pftrace x.pftrace.gz; do
        say "A program you did not instrument: --trace $t" "$bin/bench_wholeprog" --rounds 1 --trace "$tmp/$t"
        rm -f "$tmp/$t"
      done
      say "A program you did not instrument: --trace x.pftrace, plain packets" \
        env OPPROF_PFTRACE_COMPRESS=0 "$bin/bench_wholeprog" --rounds 1 --trace "$tmp/x.pftrace"
      rm -f "$tmp/x.pftrace"
      say "A program you did not instrument: --trace x.pftrace --with-stack" \
        "$bin/bench_wholeprog" --rounds 1 --trace "$tmp/x.pftrace" --with-stack
      rm -f "$tmp/x.pftrace"
      say "A program you did not instrument: the table alone" "$bin/bench_wholeprog" --rounds 3 ;;
    trace-cost) say "A program you did not instrument: what a trace changes" /usr/bin/python3 bench/bench_trace_cost.py "$build" ;;
    modes) say "Which mode do I want" bench/bench_modes.sh "$build" 3 ;;
    pftrace) say "Perfetto's own format: sizes" "$bin/bench_pftrace" 1000000 "$tmp" ;;
    keyavg) say "What it costs: key averages + table" "$bin/bench_keyavg" ;;
    memory) say "What it costs: a tracked allocation" "$bin/bench_memory" ;;
    stacks) say "What it costs: with_stack" "$bin/bench_stacks" ;;
    instrument) say "A program you did not instrument: cost per instrumented call" "$bin/bench_instrument" ;;
    threads) say "Design: chunks are pooled (short-lived threads)" "$bin/bench_threads" ;;
    model-memory) say "What it costs: a session that keeps its events" "$bin/bench_model_memory" live ;;
    reader-memory) say "What it costs: opprof summary of 20M events, resident" bench/bench_reader_memory.sh "$build" ;;
    convert-memory) say "Trace files: opprof convert's memory" bench/bench_convert_memory.sh "$build" ;;
    summary) say "What it costs: opprof summary of a Kineto trace" bench/bench_summary.sh "$build" ;;
    summary-pftrace) say "What it costs: opprof summary of bench_wholeprog's .pftrace" bench/bench_summary_pftrace.sh "$build" ;;
    summary-uftrace) say "What it costs: opprof summary against uftrace report" bench/bench_summary_uftrace.sh "$build" ;;
    report-scale) say "What it costs: the HTML report of 20M and 30M events" bench/bench_report_scale.sh "$build" ;;
    export) say "What it costs: Chrome trace export" "$bin/bench_export" ;;
    flight) say "What it costs: the flight recorder" "$bin/bench_flight" --rounds 11 ;;
    nn) say "A model to profile: the runtime against PyTorch" /usr/bin/python3 bench/nn_vs_torch.py --bin "$bin/bench_nn" ;;
    mpi)
      if [ -x "$bin/bench_mpi" ]; then
        say "Distributed runs on MPI: cost per call" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
          mpirun -np 1 "$bin/bench_mpi"
      else echo "== README: Distributed runs on MPI: skipped (no MPI build) =="; fi ;;
    *) echo "readme_figures: unknown section $s" >&2; exit 2 ;;
  esac
done
