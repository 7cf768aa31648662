#!/usr/bin/env bash
# Installs the build into a scratch prefix, then configures, builds and runs the consumer project
# against it with find_package(meshcomm), and imports the installed PyTorch package.
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
scratch="$build_dir/consumer-check"
rm -rf "$scratch"
cmake --install "$build_dir" --prefix "$scratch/prefix" > /dev/null
cmake -S "$source_dir" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" > /dev/null
cmake --build "$scratch/build" > /dev/null
"$scratch/build/consumer"
# The installed PyTorch package, where the build has it: it imports from the prefix alone and
# finds the installed library.
for package in "$scratch"/prefix/lib*/python3*/dist-packages; do
  [[ -d "$package/meshcomm/torch" ]] || continue
  PYTHONPATH="$package" /usr/bin/python3 -c \
    'import torch.distributed as dist, meshcomm.torch as mt; assert hasattr(dist.Backend, "MESHCOMM"); print("installed meshcomm.torch registers backend", mt.BACKEND, "from", mt.__file__)'
done
