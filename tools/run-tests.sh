#!/usr/bin/env bash
# Quick start (b), and exactly what CI runs: set up, build, and run the whole test suite
# (unit, threads-as-ranks, mpirun at -np 2/3/4, the installed-package consumer; gpu tests skip
# where no GPU is visible).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/build.sh
source tools/mpi_environment.sh
cd build
ctest --output-on-failure --parallel "$(nproc)" --timeout 300
