#!/usr/bin/env bash
# Quick start (a): set up, build, and run the main job on this machine under mpirun: the halo
# exchange strategies against the head-sharding all-to-all for sliding-window attention (anemoi's
# o96 case: 40320 rows, 1024 channels, window 512 each side, fp32), on 2 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/build.sh
source tools/mpi_environment.sh
mkdir -p build/results
echo
echo "== mpirun -np 2 build/perftests/halo_perf --plot build/results/halo_perf.png --json build/results/halo_perf.json"
mpirun -np 2 build/perftests/halo_perf --plot build/results/halo_perf.png --json build/results/halo_perf.json
echo
echo "The table is above; the plot is build/results/halo_perf.png and the records build/results/halo_perf.json."
