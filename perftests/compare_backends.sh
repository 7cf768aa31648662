#!/usr/bin/env bash
# Every collective on the ucx backend beside the mpi backend, under mpirun -np 2: each perftest
# runs both in the same process (--backend mpi,ucx), their timed repeats interleaved, so that drift
# on the machine hits both alike. Over several rounds, the table gives the median times and ucx /
# mpi paired repeat by repeat (each ratio from two runs of calls timed moments apart), with the
# range of the rounds' medians of those ratios, for user and allocate_shared buffers, out of place
# and in place.
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
operations=(all_gather reduce_scatter all_reduce alltoall alltoallv broadcast)
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# Fewer iterations for large sizes keep a round short; pairing and the rounds absorb the noise.
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
      mpirun -np 2 "$build/perftests/${operation}_perf" --backend mpi,ucx -b "$size" -e "$size" \
        -n "$(iterations "$size")" -w 3 --repeat 5 --buffers both --baseline none \
        --json "$results/$round-$operation-$size.json" > /dev/null
    done
  done
done

/usr/bin/python3 - "$results" "$rounds" <<'PYTHON'
import glob, json, statistics, sys
from collections import defaultdict

directory, rounds = sys.argv[1], int(sys.argv[2])
times = defaultdict(lambda: {"mpi": [], "ucx": []})  # (op, bytes, buffers, placement) -> backend -> per-run medians
ratios = defaultdict(list)                            # (op, bytes, buffers, placement) -> per-run paired ratios
for path in sorted(glob.glob(f"{directory}/*.json")):
    runs = defaultdict(dict)
    for record in json.load(open(path)):
        if record["algo"] != "auto":
            continue
        key = (record["op"], record["bytes"], record["buffers"], "in" if record["in_place"] else "out")
        runs[key][record["backend"]] = record
    for key, backends in runs.items():
        mpi, ucx = backends["mpi"], backends["ucx"]
        times[key]["mpi"].append(mpi["time_us"])
        times[key]["ucx"].append(ucx["time_us"])
        ratios[key].append([u / m for m, u in zip(mpi["repeat_times_us"], ucx["repeat_times_us"]) if m > 0 and u > 0])

print(f"# mpirun -np 2, {rounds} rounds, both backends in each run; times: median over the rounds of")
print("# each run's median (us); ucx/mpi: median of every repeat's paired ratio, and the range of the rounds'")
print("# medians; a paired ratio above 1.05 is marked")
print(f"{'operation':<15} {'bytes':>10} {'buffers':>7} {'place':>5} {'mpi (us)':>12} {'ucx (us)':>12} {'ucx/mpi':>8} "
      f"{'rounds':>12}")
for key in sorted(ratios, key=lambda k: (k[0], k[1], k[2], k[3] == "in")):
    operation, size, buffers, placement = key
    paired = statistics.median([r for run in ratios[key] for r in run])
    per_round = [statistics.median(run) for run in ratios[key] if run]
    print(f"{operation:<15} {size:>10} {buffers:>7} {placement:>5} {statistics.median(times[key]['mpi']):>12.2f} "
          f"{statistics.median(times[key]['ucx']):>12.2f} {paired:>8.2f} "
          f"{min(per_round):>5.2f}-{max(per_round):<5.2f}{' *' if paired > 1.05 else ''}")
PYTHON
