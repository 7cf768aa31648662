#!/usr/bin/env bash
# Installs the Debian packages that meshcomm's build, tests and benchmarks need.
# Idempotent: when everything is installed it only checks, and never runs apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenmpi-dev openmpi-bin libhwloc-dev libucx-dev ucx-utils libpmix-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev gnuplot-nox
  python3-torch libtorch-dev pybind11-dev python3-dev python3-pytest
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
echo "setup: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}"
