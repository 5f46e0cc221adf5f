#!/usr/bin/env bash
# The GPU check of device activity (issue 10), for a machine with an NVIDIA
# GPU and CUDA 13 under /usr/local/cuda. About 15 s on an H200 when the
# build is carried over.
#
#   scripts/gpu-check.sh
#
# 1. builds (BUILD, default build-gpu; an existing build there is reused,
#    so a build made elsewhere and carried over works too),
# 2. runs the device tests: the model mapping, CUPTI decoding, NVTX
#    injection, and the GPU operator test (must run, not skip),
# 3. gpu_resnet: ResNet-18 on the GPU against the CPU runtime (<= 1e-3
#    relative), kernels charged to conv2d / batch_norm / linear, and
#    profiled / unprofiled forward time (<= 1.05), and beside it what each
#    part costs (CPU activity alone, launch callbacks, every runtime or
#    driver call recorded, no driver records),
# 4. opprof run resnet18 --device cuda --activities cpu,cuda
#    --sort self_cuda_time_total --trace trace.json, and checks the trace
#    (kernels on stream tracks, launch -> kernel flows, charged operators),
# 5. opprof summary of that trace against the run's table; the FLOPs
#    example (--flops --sort flops) written as .pftrace and read back,
# 6. the guide's schedule over 30 steps on the GPU: two tables, two traces,
# 7. opprof exec --activities cpu,cuda of nvtx_cuda, a CUDA program with
#    NVTX ranges and no opprof in it: ranges and kernels in its table,
# and prints a summary last. Exit status: 0 when every check passed.
# Logs go to $BUILD/gpu-check/.
#
# Where the GPU machine cannot build (no cmocka or oneDNN headers there),
# build on a CPU machine that has CUDA, and carry build-gpu over (about 40 MB):
#   cmake -S . -B build-gpu -DOPPROF_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES=90
#   cmake --build build-gpu -j
# The run-time libraries (libdnnl, libcmocka, libunwind, libdw, CUDA 13) must
# be there too (LD_LIBRARY_PATH may name a folder of copies); the
# script names any that are missing.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$BUILD/gpu-check"
LOG=$(cd "$BUILD/gpu-check" && pwd) # absolute: the tests run from $BUILD/tests
summary=()
failed=0
note() { summary+=("$(printf '%-5s %s' "$1" "$2")"); [ "$1" = FAIL ] && failed=1; return 0; }
t0=$(date +%s)

echo "== GPU"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$LOG/gpu.txt"
  note INFO "GPU: $(head -1 "$LOG/gpu.txt")"
else
  note FAIL "nvidia-smi not found: no NVIDIA driver on this machine"
fi

echo "== build ($BUILD)"
if [ ! -x "$BUILD/tests/test_gpu_ops" ] || [ ! -x "$BUILD/bin/opprof" ]; then
  if timeout 300 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPPROF_BUILD_BENCH=OFF \
       -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" >"$LOG/build.txt" 2>&1 &&
     timeout 300 cmake --build "$BUILD" -j"$JOBS" >>"$LOG/build.txt" 2>&1; then
    note PASS "build ($(( $(date +%s) - t0 )) s)"
  else
    tail -30 "$LOG/build.txt"
    note FAIL "build: see $LOG/build.txt"
  fi
else
  note INFO "build: reusing $BUILD"
fi
grep -h "opprof: CUDA" "$LOG/build.txt" 2>/dev/null
# A build carried from another machine needs the same shared libraries here.
for b in tests/test_gpu_ops tests/gpu_resnet bin/opprof lib/libopprof_nn_cuda.so; do
  [ -e "$BUILD/$b" ] || continue
  missing=$(ldd "$BUILD/$b" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  [ -n "$missing" ] && note FAIL "$b: shared libraries missing on this machine: $missing"
done

# A test binary: PASS on 0, FAIL otherwise (77, skipped, is a failure for
# tests that need the GPU).
run_test() {
  local name=$1; shift
  if [ ! -x "$BUILD/tests/$name" ]; then note FAIL "$name: not built"; return; fi
  (cd "$BUILD/tests" && env "$@" timeout 120 "./$name") >"$LOG/$name.txt" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then note PASS "$name"; else tail -20 "$LOG/$name.txt"; note FAIL "$name (exit $rc)"; fi
}

echo "== device tests"
run_test test_device_map
run_test test_cupti_decode
run_test test_device_export
run_test test_nvtx NVTX_INJECTION64_PATH="$(readlink -f "$BUILD/lib/libopprof.so")"
run_test test_gpu_ops
grep -E "max relative error|kernels,|device time" "$LOG/test_gpu_ops.txt" 2>/dev/null
(cd "$BUILD/tests" && ./test_device_nodev >"$LOG/test_device_nodev.txt" 2>&1)
[ $? -eq 77 ] && note PASS "test_device_nodev skips where a device exists" \
              || note FAIL "test_device_nodev did not see the device"

echo "== ResNet-18 on the GPU"
result() { grep "^RESULT $1 " "$2" | awk '{print $3}'; }
if [ -x "$BUILD/tests/gpu_resnet" ]; then
  (cd "$BUILD/tests" && timeout 240 ./gpu_resnet --batch 5) >"$LOG/gpu_resnet.txt" 2>&1
  rc=$?
  cat "$LOG/gpu_resnet.txt"
  err=$(result gpu_vs_cpu_rel_err "$LOG/gpu_resnet.txt"); ratio=$(result overhead_ratio "$LOG/gpu_resnet.txt")
  fwd=$(result "forward_ms\[unprofiled\]" "$LOG/gpu_resnet.txt")
  note "$( [ $rc -eq 0 ] && echo PASS || echo FAIL)" \
       "gpu_resnet: rel err ${err:-?} (<= 1e-3), overhead ${ratio:-?} (<= 1.05, forward ${fwd:-?} ms), linked:$(grep -o 'cuda_time_total_us\[[^]]*\] [0-9.]*' "$LOG/gpu_resnet.txt" | sed 's/cuda_time_total_us//' | tr '\n' ' ')"
  # What each part costs, measured in the same process (gpu_resnet.c).
  while read -r _ k v rest; do note INFO "overhead $k $v $rest"; done < <(grep "^RESULT overhead\[" "$LOG/gpu_resnet.txt")
  # CUPTI on its own clock (the setting is read once a process).
  (cd "$BUILD/tests" && OPPROF_CUDA_NO_TIMESTAMP=1 timeout 240 ./gpu_resnet --batch 5 --rounds 40) >"$LOG/gpu_resnet.no_timestamp.txt" 2>&1
  while read -r _ k v rest; do note INFO "overhead (OPPROF_CUDA_NO_TIMESTAMP=1) $k $v $rest"; done < <(grep "^RESULT overhead\[cuda\]" "$LOG/gpu_resnet.no_timestamp.txt")
else
  note FAIL "gpu_resnet: not built (needs nn/ and nn/cuda)"
fi

echo "== opprof run resnet18 --device cuda"
trace=$LOG/trace.json
rm -f "$trace"
(timeout 120 "$BUILD/bin/opprof" run resnet18 --device cuda --activities cpu,cuda --sort self_cuda_time_total \
   --trace "$trace") >"$LOG/run.txt" 2>&1
rc=$?
cat "$LOG/run.txt"
if [ $rc -eq 0 ] && grep -q "Self CUDA" "$LOG/run.txt"; then
  note PASS "opprof run resnet18 --device cuda: table with Self CUDA columns"
else
  note FAIL "opprof run resnet18 --device cuda (exit $rc; see $LOG/run.txt)"
fi
if [ ! -s "$trace" ]; then
  note FAIL "trace.json was not written"
elif command -v python3 >/dev/null; then
  python3 scripts/gpu_trace_check.py "$trace" >"$LOG/trace_check.txt" 2>&1
  rc=$?
  cat "$LOG/trace_check.txt"
  note "$( [ $rc -eq 0 ] && echo PASS || echo FAIL)" "trace: $(grep '^TRACE events' "$LOG/trace_check.txt" | cut -c7-)"
else
  note INFO "trace written; python3 missing, so not parsed here"
fi

echo "== opprof summary of that trace"
# The table read back from the trace must be the run's: the same rows in the
# same order with the same calls, and times equal to the rounding of the
# file's microseconds (1 ns a timestamp).
if [ -s "$trace" ]; then
  "$BUILD/bin/opprof" summary "$trace" --sort self_cuda_time_total >"$LOG/summary.txt" 2>&1
  sed -n '/^---/,$p' "$LOG/run.txt" >"$LOG/run_table.txt"
  if python3 scripts/table_compare.py "$LOG/run_table.txt" "$LOG/summary.txt" >"$LOG/compare.txt" 2>&1; then
    note PASS "opprof summary of the trace: $(tail -1 "$LOG/compare.txt")"
  else
    cat "$LOG/compare.txt"
    note FAIL "opprof summary of the trace differs from the run's table (see $LOG/compare.txt)"
  fi
fi

echo "== opprof run resnet18 --device cuda --flops --sort flops (the guide's FLOPs example)"
ptrace=$LOG/trace.pftrace
(timeout 120 "$BUILD/bin/opprof" run resnet18 --device cuda --activities cpu,cuda --flops --sort flops \
   --trace "$ptrace") >"$LOG/run_flops.txt" 2>&1
rc=$?
cat "$LOG/run_flops.txt"
# PyTorch scales the FLOPs column's unit to the largest value: at batch 5,
# aten::conv2d's 18135613440 FLOPs show as 18135.613 under "Total MFLOPs".
if [ $rc -eq 0 ] && grep -Eq "Total [KMGTP]?FLOPs" "$LOG/run_flops.txt" && grep -q "Self CUDA" "$LOG/run_flops.txt" &&
   grep -Eq "^ *aten::conv2d .* 18135\.613 *$" "$LOG/run_flops.txt"; then
  note PASS "opprof run resnet18 --device cuda --flops: Self CUDA and Total MFLOPs, aten::conv2d 18135.613"
else
  note FAIL "opprof run resnet18 --device cuda --flops (exit $rc; see $LOG/run_flops.txt)"
fi
if [ -s "$ptrace" ]; then
  "$BUILD/bin/opprof" summary "$ptrace" --sort flops >"$LOG/summary_flops.txt" 2>&1
  sed -n '/^---/,$p' "$LOG/run_flops.txt" >"$LOG/run_flops_table.txt"
  if python3 scripts/table_compare.py "$LOG/run_flops_table.txt" "$LOG/summary_flops.txt" >"$LOG/compare_flops.txt" 2>&1; then
    note PASS "opprof summary of the .pftrace: $(tail -1 "$LOG/compare_flops.txt")"
  else
    cat "$LOG/compare_flops.txt"
    note FAIL "opprof summary of the .pftrace differs from the run's table (see $LOG/compare_flops.txt)"
  fi
else
  note FAIL "trace.pftrace was not written"
fi

echo "== opprof run resnet18 --device cuda --schedule (the guide's long-running example)"
# skip_first=10,wait=5,warmup=1,active=3,repeat=2 over 30 steps records steps
# 16-18 and 25-27: two tables, two traces, each with its steps' kernels only.
sdir=$LOG/sched
rm -rf "$sdir"
(timeout 120 "$BUILD/bin/opprof" run resnet18 --device cuda --activities cpu,cuda --steps 30 \
   --schedule skip_first=10,wait=5,warmup=1,active=3,repeat=2 --sort self_cuda_time_total --trace-dir "$sdir") \
   >"$LOG/run_sched.txt" 2>&1
rc=$?
tables=$(grep -c "^Self CUDA time total" "$LOG/run_sched.txt")
ntr=$(ls "$sdir"/*.pt.trace.json 2>/dev/null | wc -l)
sched_ok=1
for f in "$sdir"/*.pt.trace.json; do
  [ -f "$f" ] || continue
  python3 scripts/gpu_trace_check.py "$f" aten::conv2d aten::batch_norm aten::linear >"$f.check.txt" 2>&1 || sched_ok=0
  steps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted({e["name"] for e in d["traceEvents"] if e.get("name","").startswith("ProfilerStep#")}))' "$f" 2>&1)
  echo "$f: $steps"
  grep "^TRACE events" "$f.check.txt"
done
if [ $rc -eq 0 ] && [ "$tables" = 2 ] && [ "$ntr" = 2 ] && [ $sched_ok = 1 ]; then
  note PASS "schedule on the GPU: 2 tables with Self CUDA, 2 traces with kernels charged to conv2d/batch_norm/linear"
else
  note FAIL "schedule on the GPU (exit $rc, $tables tables, $ntr traces; see $LOG/run_sched.txt)"
fi

echo "== opprof exec of an NVTX-annotated CUDA program"
# nvtx_cuda has no opprof in it: its NVTX ranges (setup, 10 x step > scale,
# add, download) must be operators with its kernels and copies charged to them.
if [ -x "$BUILD/tests/nvtx_cuda" ]; then
  nt=$LOG/nvtx_trace.json
  rm -f "$nt"
  (timeout 120 "$BUILD/bin/opprof" exec --activities cpu,cuda --sort self_cuda_time_total --row-limit -1 \
     --table "$LOG/nvtx_table.txt" --trace "$nt" -- "$BUILD/tests/nvtx_cuda" 10) >"$LOG/nvtx_run.txt" 2>&1
  rc=$?
  cat "$LOG/nvtx_run.txt" "$LOG/nvtx_table.txt" 2>/dev/null
  rows_ok=1
  for r in "step 10" "scale 10" "add 10" "setup 1" "download 1"; do
    set -- $r
    awk -v n="$1" -v c="$2" '$1 == n && $NF == c {f=1} END {exit !f}' "$LOG/nvtx_table.txt" 2>/dev/null || rows_ok=0
  done
  grep -q "Self CUDA" "$LOG/nvtx_table.txt" 2>/dev/null || rows_ok=0
  grep -Eq "^ *scale\(float\*, float, int\) .* 10 *$" "$LOG/nvtx_table.txt" 2>/dev/null || rows_ok=0
  if [ $rc -eq 0 ] && [ $rows_ok = 1 ]; then
    note PASS "opprof exec of nvtx_cuda: NVTX ranges and kernels in the table"
  else
    note FAIL "opprof exec of nvtx_cuda (exit $rc; see $LOG/nvtx_run.txt, nvtx_table.txt)"
  fi
  if [ -s "$nt" ]; then
    python3 scripts/gpu_trace_check.py "$nt" scale add step >"$LOG/nvtx_trace_check.txt" 2>&1
    rc=$?
    cat "$LOG/nvtx_trace_check.txt"
    note "$( [ $rc -eq 0 ] && echo PASS || echo FAIL)" "nvtx_cuda trace: $(grep '^TRACE events' "$LOG/nvtx_trace_check.txt" | cut -c7-)"
  else
    note FAIL "nvtx_cuda: the trace was not written"
  fi
else
  note FAIL "nvtx_cuda: not built (needs nvcc and the NVTX 3 headers)"
fi

echo
echo "== summary ($(( $(date +%s) - t0 )) s)"
printf '%s\n' "${summary[@]}"
exit $failed
