#!/usr/bin/env bash
# Builds meshcomm a second time, host only and sanitized, and runs its tests there:
# - with CUDA switched off, as on a machine without the CUDA toolkit (the host build must never
#   need CUDA or NCCL);
# - with AddressSanitizer and UndefinedBehaviorSanitizer on every target, then the unit, threads
#   and mpi tests (ranks as threads and under mpirun): any out-of-bounds access, use after free
#   or undefined behaviour stops the test that hit it.
# To keep it short, examples, the perftests with their engine, meshcomm-advise with its cost
# model and the meshcomm-topo command (host arithmetic over the library's placement code, which
# the unit tests run here) are left out, and it is a unity build of up to 16 files per batch
# (the main build still compiles every file on its own, so a missing include shows there; with
# 16 files instead of CMake's 8 and no meshcomm-topo the build took 434 CPU-seconds instead of
# 560) at -Og, GCC's optimisation for debugging: the library's largest batch compiled in 28 s
# against 54 s at -O1 and the test harness's in 26 s against 49 (alternated), the whole build
# took 211 s alone, and the tests below ran as fast as at -O1 (134.7 against 134.6 s, back to
# back); the perftests' smoke runs, the numeric variants, the 16-thread collective
# matrices (the same code as the 2-7 thread ones, a minute and a half under the sanitizers) and
# the mpi suites at 3 processes (the backends' code as at 2 and 4; the collectives' odd-count
# paths run here on 3 and 7 thread ranks) and the ucx suite with exchanges announced at 4
# processes (the descriptor path, which the ucx suite at 2 processes takes by default) and the
# collectives with every eager payload read from its writer's buffer at 3 processes (the same
# reads run here in the suites at 2 processes, which take payloads of 32 KiB and more that way by
# default) stay in the main build; the suites at 4 processes leave out the disagreeing calls,
# which run at 2, and the mpi suites run one at a time (tests/CMakeLists.txt).
# The build step runs beside the main build's other tests, at a lower priority: their ranks wait
# on each other, and a rank that has to wait for its turn on a core behind the compiler holds up
# its peers (at equal priority the mpi suite at 4 processes took 124 s beside this build, at nice
# 10 it took 44 s, and the whole ctest run 763 s against 788). The test step runs alone.
#   check_sanitized_host_build.sh build|test SOURCE_DIR BINARY_DIR
set -euo pipefail
step=$1
source_dir=$2
build_dir=$3/sanitized-host-build

# The end of each failed test's output (the first three), from ctest's own record of the run.
show_failed_tests_output() {
  local record=$build_dir/Testing/Temporary
  [[ -f $record/LastTestsFailed.log ]] || return 0
  head -3 "$record/LastTestsFailed.log" | while IFS=: read -r _ name; do
    echo "---- the last 40 lines from $name ----"
    awk -v start="Testing: $name" -v stop="\"$name\" end time:" '
      !on && substr($0, length($0) - length(start) + 1) == start { on = 1 }
      on { print }
      on && index($0, stop) == 1 { exit }' "$record/LastTest.log" | tail -40
  done
}

case "$step" in
  build)
    cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-Og -g1" \
          -DMESHCOMM_WARNINGS_AS_ERRORS=ON -DMESHCOMM_WITH_CUDA=OFF -DMESHCOMM_SANITIZERS=address,undefined \
          -DMESHCOMM_BUILD_EXAMPLES=OFF -DMESHCOMM_BUILD_PERFTESTS=OFF -DMESHCOMM_BUILD_PYTHON=OFF \
          -DMESHCOMM_BUILD_ADVISOR=OFF -DMESHCOMM_BUILD_TOPO_TOOL=OFF -DCMAKE_UNITY_BUILD=ON \
          -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 > /dev/null
    nice -n 10 cmake --build "$build_dir" --parallel "$(nproc)" > "$build_dir.log" 2>&1 ||
      { tail -40 "$build_dir.log"; exit 1; }
    grep -q "MESHCOMM_HAVE_CUDA 0" "$build_dir/generated/include/meshcomm/config.hpp"
    echo "meshcomm builds without CUDA, sanitized"
    ;;
  test)
    # Open MPI keeps memory until exit on purpose: leaks are not what this run looks for.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ctest --test-dir "$build_dir" -L 'unit|threads|mpi' -LE numeric -E '^install_consumer$|ExactResults/.*_world16|^mpi_tests(_ucx)?_np3$|^mpi_tests_ucx_announced_np4$|^mpi_collectives_eager_peer_reads_np3$' \
          --parallel "$(nproc)" --timeout 600 --output-on-failure > "$build_dir-tests.log" 2>&1 || {
      grep -E "tests passed|\*\*\*|ERROR: AddressSanitizer|runtime error" "$build_dir-tests.log" | head -40
      show_failed_tests_output
      exit 1
    }
    grep "tests passed" "$build_dir-tests.log"
    echo "the unit, threads and mpi tests pass under AddressSanitizer and UndefinedBehaviorSanitizer"
    ;;
  *)
    echo "check_sanitized_host_build.sh: step '$step' is not 'build' or 'test'" >&2
    exit 2
    ;;
esac
