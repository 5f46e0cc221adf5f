#!/usr/bin/env bash
# Installs the Debian packages opprof needs, when they are missing.
#   scripts/deps.sh          what building and testing need
#   scripts/deps.sh bench    also what the benchmarks compare against
#   scripts/deps.sh fuzz     also the fuzzing toolchain (scripts/fuzz.sh)
# Runs apt-get update once, only when something must be installed.
set -euo pipefail

build_pkgs=(
  build-essential cmake pkg-config
  libcmocka-dev          # tests
  protobuf-compiler      # tests: protoc decodes .pftrace files with Perfetto's schema
  zlib1g-dev libdeflate-dev   # gzip traces
  libzstd-dev                 # a .pftrace's batches (zstd_compressed_packets)
  libopenblas-dev libdnnl-dev # the model runtime's GEMM and convolution
  libunwind-dev libdw-dev     # stacks
  python3                     # fixture checks
  openmpi-bin libopenmpi-dev  # the MPI profiling library and its tests (mpirun)
  chromium                    # the HTML report's tests, headless
  valgrind                    # memcheck of the CLI (tests/valgrind)
)
bench_pkgs=(python3-torch python3-torchvision hyperfine time) # time: /usr/bin/time for peak RSS
fuzz_pkgs=(clang-14 libclang-rt-14-dev) # libFuzzer with ASan/UBSan

want=("${build_pkgs[@]}")
if [ "${1:-}" = "bench" ]; then want+=("${bench_pkgs[@]}"); fi
if [ "${1:-}" = "fuzz" ]; then want+=("${fuzz_pkgs[@]}"); fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
