# The two commands of the README, and the rest of the workflow.
#   make demo    install what is missing, build, run the main job
#   make test    install what is missing, build, run every test
#                (normal build with valgrind memcheck of the CLI, then ASan+UBSan
#                and TSan builds of the suite): every stage runs even when one
#                fails, a summary line per stage ends the output, and the exit
#                status is non-zero when any stage failed
#   make check-floors  docs/DESIGN.md's floors and seam, checked against the
#                code (and the built libopprof.so's exports when there is one)
#   make bench   build and run the benchmarks (never part of the tests)
#   make install install under PREFIX (default /usr/local)

BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-fast test-asan test-tsan check-floors bench stress install clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@$(BUILD)/bin/opprof run resnet18

# The normal build's suite.
test-fast: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DOPPROF_SANITIZE=address -DOPPROF_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(BUILD)-asan -j$(JOBS)
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS)

test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPPROF_SANITIZE=thread -DOPPROF_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(BUILD)-tsan -j$(JOBS)
	@cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j$(JOBS)

check-floors:
	@python3 scripts/check_floors.py $(if $(wildcard $(BUILD)/lib/libopprof.so),--lib $(BUILD)/lib/libopprof.so)

# Every stage, whatever the one before did: a flaky test in the first must
# not hide the sanitizers' results. Each stage's status is kept and listed.
test: deps
	@st=0; summary=""; \
	for stage in test-fast check-floors test-asan test-tsan; do \
	  if $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $$stage; then r=passed; else r=FAILED; st=1; fi; \
	  summary="$$summary$$stage: $$r\n"; \
	done; \
	printf "\n== make test ==\n$$summary"; \
	exit $$st

bench: build
	@scripts/deps.sh bench
	@$(BUILD)/bin/bench_overhead
	@$(BUILD)/bin/bench_keyavg
	@$(BUILD)/bin/bench_memory
	@$(BUILD)/bin/bench_stacks
	@$(BUILD)/bin/bench_instrument
	@$(BUILD)/bin/bench_threads
	@$(BUILD)/bin/bench_wholeprog
	@$(BUILD)/bin/bench_model_memory live
	@bench/bench_reader_memory.sh $(BUILD)
	@bench/bench_convert_memory.sh $(BUILD)
	@bench/bench_modes.sh $(BUILD)
	@$(BUILD)/bin/bench_import
	@bench/bench_summary.sh $(BUILD)
	@$(BUILD)/bin/bench_export
	@$(BUILD)/bin/bench_flight --rounds 11
	@/usr/bin/python3 bench/nn_vs_torch.py --bin $(BUILD)/bin/bench_nn
	@if [ -x $(BUILD)/bin/bench_mpi ]; then OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 1 $(BUILD)/bin/bench_mpi; fi

# The long variants of the stress tests (issue 9's sizes: 16 threads x 50M events
# against a cap of 10M, 10,000 sessions, 10,000 schedule cycles); not in `make test`.
stress: build
	@OPPROF_STRESS=long $(BUILD)/tests/test_stress

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
