#!/usr/bin/env bash
# Installs the build into a scratch prefix, then configures, builds and runs the consumer project
# against it with find_package(meshcomm).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
scratch="$build_dir/consumer-check"
rm -rf "$scratch"
cmake --install "$build_dir" --prefix "$scratch/prefix" > /dev/null
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" > /dev/null
cmake --build "$scratch/build" > /dev/null
"$scratch/build/consumer"
