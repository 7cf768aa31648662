#!/usr/bin/env bash
# Every collective on the ucx backend beside the mpi backend, under mpirun -np 2: the two
# alternate, operation by operation, over several rounds (so that drift on the machine hits both
# alike), and the table gives the medians and ucx / mpi for user and allocate_shared buffers.
#
#   bash perftests/compare_backends.sh [build-dir] [rounds] [sizes...]
#   bash perftests/compare_backends.sh build 5 1K 64K 1M 16M 64M
set -euo pipefail

build=${1:-build}
rounds=${2:-5}
shift $(($# >= 2 ? 2 : $#))
sizes=("$@")
((${#sizes[@]} > 0)) || sizes=(1K 64K 1M 16M 64M)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/mpi_environment.sh"
operations=(all_gather reduce_scatter all_reduce alltoall broadcast)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# Fewer iterations for large sizes keep a round short; the medians over rounds absorb the noise.
iterations() {
  case "$1" in
    *G | [0-9][0-9]M | [4-9]M) echo 10 ;;
    *M) echo 30 ;;
    *) echo 200 ;;
  esac
}

for ((round = 1; round <= rounds; ++round)); do
  for operation in "${operations[@]}"; do
    for size in "${sizes[@]}"; do
      for backend in mpi ucx; do
        mpirun -np 2 "$build/perftests/${operation}_perf" --backend "$backend" -b "$size" -e "$size" \
          -n "$(iterations "$size")" -w 3 --repeat 3 --buffers both --baseline none \
          | awk -v op="$operation" -v b="$backend" '$1 ~ /^[0-9]+$/ {split($6, a, "/"); print op, $1, a[2], b, $7}' \
          >> "$results"
      done
    done
  done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf "# mpirun -np 2, %d rounds alternated, median time per call (us); ucx/mpi above 1.05 is marked\n" "$rounds"
printf "%-15s %10s %7s %12s %12s %9s\n" "operation" "bytes" "buffers" "mpi (us)" "ucx (us)" "ucx/mpi"
awk '{print $1, $2, $3}' "$results" | sort -u -k1,1 -k2,2n -k3,3 | while read -r operation bytes buffers; do
  pick() {
    awk -v o="$operation" -v s="$bytes" -v u="$buffers" -v b="$1" \
      '$1 == o && $2 == s && $3 == u && $4 == b {print $5}' "$results" | median
  }
  mpi=$(pick mpi)
  ucx=$(pick ucx)
  awk -v o="$operation" -v s="$bytes" -v u="$buffers" -v m="$mpi" -v x="$ucx" \
    'BEGIN {r = x / m; printf "%-15s %10s %7s %12.2f %12.2f %8.2f%s\n", o, s, u, m, x, r, (r > 1.05 ? " *" : "")}'
done
