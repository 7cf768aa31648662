#!/usr/bin/env bash
# Quick start (b), and exactly what CI runs: set up, build, and run the whole test suite
# (unit, threads-as-ranks, mpirun at -np 2/3/4, the installed-package consumer; gpu tests skip
# where no GPU is visible).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/build.sh
source tools/mpi_environment.sh
cd build
# One slot more than the cores: the sanitized build (tests/CMakeLists.txt) holds a slot for its
# whole compile, at a lower priority, and many tests wait more than they compute (timeouts, absent
# ranks). On CI's two cores the tests before the sanitized ones took 400 s at three slots against
# 473 s at two, the sanitized build then the last to finish.
ctest --output-on-failure --parallel "$(($(nproc) + 1))" --timeout 300
