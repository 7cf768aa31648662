#!/usr/bin/env bash
# Every collective on the ucx backend beside the mpi backend, under mpirun -np 2: each perftest
# runs both in the same process (--backend mpi,ucx), their timed repeats interleaved, so that drift
# on the machine hits both alike. Over several rounds, the table gives the median times and ucx /
# mpi paired repeat by repeat (each ratio from two runs of calls timed moments apart), with the
# range of the rounds' medians of those ratios, for user and allocate_shared buffers, out of place
# and in place.
#
# With CONTROL=1 the all-gather and the broadcast also run `--algo eager`, which is what `auto`
# runs at two ranks on both backends: a second table pairs eager with auto on each backend, the
# same code on the same communicator, to show how far the method's own noise reaches.
#
#   bash perftests/compare_backends.sh [build-dir] [rounds] [sizes...]
#   bash perftests/compare_backends.sh build 5 1K 64K 1M 16M 64M
#   CONTROL=1 bash perftests/compare_backends.sh build 12 1M 4M 16M 64M
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
      algorithms=auto
      [[ ${CONTROL:-0} == 1 && ($operation == all_gather || $operation == broadcast) ]] && algorithms=auto,eager
      mpirun -np 2 "$build/perftests/${operation}_perf" --backend mpi,ucx --algo "$algorithms" -b "$size" -e "$size" \
        -n "$(iterations "$size")" -w 3 --repeat 5 --buffers both --baseline none \
        --json "$results/$round-$operation-$size.json" > /dev/null
    done
  done
done

/usr/bin/python3 - "$results" "$rounds" <<'PYTHON'
import glob, json, statistics, sys
from collections import defaultdict

directory, rounds = sys.argv[1], int(sys.argv[2])
# (op, bytes, buffers, placement) -> (algorithm, backend) -> each run's medians and its repeats' times
runs_of = defaultdict(lambda: defaultdict(list))
for path in sorted(glob.glob(f"{directory}/*.json")):
    for record in json.load(open(path)):
        key = (record["op"], record["bytes"], record["buffers"], "in" if record["in_place"] else "out")
        runs_of[key][(record["algo"], record["backend"])].append(record)


def table(title, numerator, denominator):
    """Median times over the rounds, and numerator over denominator (each an (algorithm, backend)
    pair) paired repeat by repeat."""
    label = (numerator[1] if numerator[1] != denominator[1] else numerator[0],
             denominator[1] if numerator[1] != denominator[1] else denominator[0])
    print(title)
    print(f"{'operation':<15} {'bytes':>10} {'buffers':>7} {'place':>5} {label[1] + ' (us)':>12} "
          f"{label[0] + ' (us)':>12} {label[0] + '/' + label[1]:>9} {'rounds':>12}")
    above = 0
    rows = 0
    for key in sorted(runs_of, key=lambda k: (k[0], k[1], k[2], k[3] == "in")):
        runs = runs_of[key]
        if numerator not in runs or denominator not in runs:
            continue
        tops, bottoms = runs[numerator], runs[denominator]
        ratios = [[u / m for m, u in zip(b["repeat_times_us"], t["repeat_times_us"]) if m > 0 and u > 0]
                  for t, b in zip(tops, bottoms)]
        paired = statistics.median([r for run in ratios for r in run])
        per_round = [statistics.median(run) for run in ratios if run]
        operation, size, buffers, placement = key
        rows += 1
        above += paired > 1.05
        print(f"{operation:<15} {size:>10} {buffers:>7} {placement:>5} "
              f"{statistics.median(b['time_us'] for b in bottoms):>12.2f} "
              f"{statistics.median(t['time_us'] for t in tops):>12.2f} {paired:>9.2f} "
              f"{min(per_round):>5.2f}-{max(per_round):<5.2f}{' *' if paired > 1.05 else ''}")
    print(f"# {above} of {rows} above 1.05")


print(f"# mpirun -np 2, {rounds} rounds, both backends in each run; times: median over the rounds of")
print("# each run's median (us); ratios: median of every repeat's paired ratio, and the range of the rounds'")
print("# medians; a paired ratio above 1.05 is marked")
table("# ucx beside mpi", ("auto", "ucx"), ("auto", "mpi"))
for backend in ("mpi", "ucx"):
    if any(("eager", backend) in runs for runs in runs_of.values()):
        table(f"# control on {backend}: eager beside auto, the same path at two ranks", ("eager", backend),
              ("auto", backend))
PYTHON
