#!/usr/bin/env bash
# Quick start (a): set up, build, and run the main job on this machine under mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/build.sh
source tools/mpi_environment.sh
echo
echo "== mpirun -np 4 build/examples/mesh_groups --mesh-dim 1,-1,2,1"
mpirun -np 4 build/examples/mesh_groups --mesh-dim 1,-1,2,1
