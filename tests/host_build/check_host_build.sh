#!/usr/bin/env bash
# Builds meshcomm with CUDA switched off, as on a machine without the CUDA toolkit: the host
# build must never need CUDA (or NCCL). Tests and examples are left out to keep it short.
set -euo pipefail
source_dir=$1
build_dir=$2/host-build-check
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMESHCOMM_WARNINGS_AS_ERRORS=ON \
      -DMESHCOMM_WITH_CUDA=OFF -DMESHCOMM_BUILD_TESTS=OFF -DMESHCOMM_BUILD_EXAMPLES=OFF > /dev/null
cmake --build "$build_dir" --parallel "$(nproc)" > "$build_dir.log" 2>&1 || { tail -40 "$build_dir.log"; exit 1; }
grep -q "MESHCOMM_HAVE_CUDA 0" "$build_dir/generated/include/meshcomm/config.hpp"
echo "meshcomm builds without CUDA"
