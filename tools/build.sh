#!/usr/bin/env bash
# Sets up the machine, then configures and builds meshcomm into build/ (Release, warnings as
# errors). Extra arguments go to cmake's configure step, e.g. -DMESHCOMM_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMESHCOMM_WARNINGS_AS_ERRORS=ON "$@"
cmake --build build --parallel "$(nproc)"
