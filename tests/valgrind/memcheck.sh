#!/usr/bin/env bash
# valgrind memcheck of the opprof command on the shared fixtures: summary and
# diff of PyTorch and Kineto traces, and run at a small size. Any memcheck
# error, or any definitely or indirectly lost block, fails the test.
# "Possibly lost" and "still reachable" blocks are neither shown nor counted:
# OpenMP's thread pool (libgomp, under oneDNN) is never joined at exit, by
# design, so its threads' stacks and TLS are always "possibly lost".
#   memcheck.sh OPPROF_BINARY FIXTURES_DIR SUPPRESSIONS
# Exit 77 (skipped) when valgrind is not installed (scripts/deps.sh installs it).
set -uo pipefail
bin=$1 fixtures=${OPPROF_FIXTURES:-$2} supp=$3
if ! command -v valgrind >/dev/null; then
  echo "valgrind is not installed (scripts/deps.sh installs it): memcheck skipped"
  exit 77
fi
log=$(mktemp -d /tmp/opprof_memcheck_XXXXXX)
trap 'rm -rf "$log"' EXIT
fail=0 n=0

check() { # NAME EXIT ARGS...: runs opprof ARGS under memcheck, expecting exit status EXIT
  local name=$1 want=$2; shift 2
  local start=$SECONDS
  valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
    --error-exitcode=99 --suppressions="$supp" --log-file="$log/$name.vg" "$bin" "$@" >"$log/$name.out" 2>&1
  local rc=$?
  n=$((n + 1))
  if [ $rc -ne "$want" ] || [ -s "$log/$name.vg" ]; then
    echo "FAIL $name (exit $rc): opprof $*"
    cat "$log/$name.vg" "$log/$name.out" | head -60
    fail=1
  else
    echo "ok   $name ($((SECONDS - start)) s): opprof $*"
  fi
}

tt=$fixtures/torch-traces kt=$fixtures/kineto
if [ -d "$tt" ] && [ -d "$kt" ]; then
  for f in "$tt"/*.trace.json "$kt"/*.json.gz; do
    check "summary_$(basename "$f")" 0 summary "$f" --row-limit 5
  done
  check summary_shapes_csv 0 summary "$tt/resnet18_infer_b5.trace.json" --group-by-input-shape --format csv
  check diff_torch 0 diff "$tt/resnet18_infer_b5.trace.json" "$tt/mlp_train_3steps.trace.json" --row-limit 5
  kin=("$kt"/*.json.gz)
  check diff_kineto 0 diff "${kin[0]}" "${kin[-1]}" --format json
else
  echo "fixtures not found in $fixtures (set OPPROF_FIXTURES): summary and diff not checked"
fi
check summary_refused 2 summary "$(dirname "$0")/../import/malformed/gzip_truncated.json.gz"
check run_resnet18 0 run resnet18 --batch 1 --image-size 32 --warmup 0 --flops --group-by-input-shape --row-limit 5
check run_mlp_train 0 run mlp-train --steps 1 --warmup 0 --shapes --row-limit 5
echo "$n commands under memcheck"
exit $fail
