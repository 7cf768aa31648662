#!/usr/bin/env bash
# meshcomm's default selection against the best of Open MPI, for every host collective. Each
# perftest runs with user and allocate_shared buffers beside its mpi_best reference (of Open
# MPI's blocking and nonblocking call on user buffers, timed in the same interleaved repeats, the
# one with the lower median at each size). With OSU_DIR set to a directory holding an OSU Micro-Benchmarks build
# (osu_allgather, osu_allreduce, ... anywhere below it), each OSU benchmark runs right after the
# perftest of its operation, in every round, and its max-latency column joins the table. Nothing
# is built or fetched here. The OSU column's ratio is over meshcomm's out-of-place time on user
# buffers, but for the broadcast over its in-place time: osu_bcast broadcasts data at rest.
#
#   bash perftests/compare_mpi.sh [build-dir] [rounds] [np...]
#   OSU_DIR=$HOME/osu-micro-benchmarks-7.4 bash perftests/compare_mpi.sh build 3 2 4
#
# Sizes are meshcomm's (the size column of its perftests: the gathered output of all-gather and
# all-to-all, the input of reduce-scatter), 1 KiB to 64 MiB by 4x; OSU's size is mapped to them:
# the per-rank block for all-gather and all-to-all, the whole input for reduce-scatter.
set -euo pipefail

build=${1:-build}
rounds=${2:-3}
shift $(($# >= 2 ? 2 : $#))
rank_counts=("$@")
((${#rank_counts[@]} > 0)) || rank_counts=(2 4)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/mpi_environment.sh"
operations=(all_gather reduce_scatter all_reduce alltoall alltoallv broadcast)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The OSU benchmark of a meshcomm operation, if OSU_DIR holds it.
osu_binary() {
  [ -n "${OSU_DIR:-}" ] || return 0
  local name
  case "$1" in
    all_gather) name=osu_allgather ;;
    reduce_scatter) name=osu_reduce_scatter ;;
    all_reduce) name=osu_allreduce ;;
    alltoall) name=osu_alltoall ;;
    broadcast) name=osu_bcast ;;
    *) return 0 ;;  # alltoallv: its blocks differ in size, OSU's osu_alltoallv sends equal ones
  esac
  find "$OSU_DIR" -type f -name "$name" -perm -u+x | head -n 1
}

for ((round = 0; round < rounds; ++round)); do
  for ranks in "${rank_counts[@]}"; do
    for operation in "${operations[@]}"; do
      launch_ranks "$ranks" "$build/perftests/${operation}_perf" -b 1K -e 64M -f 4 -n 10 -w 2 \
        --repeat 5 --buffers both --json "$out/meshcomm_${operation}_${ranks}_${round}.json" > /dev/null
      osu=$(osu_binary "$operation")
      if [ -n "$osu" ]; then
        # -f: average, minimum and maximum latency; the maximum over ranks is meshcomm's -a 3.
        launch_ranks "$ranks" "$osu" -f -m 1:67108864 -i 20 -x 5 |
          awk -v op="$operation" -v np="$ranks" '$1 ~ /^[0-9]+$/ {print op, np, $1, $4}' >> "$out/osu_$round.txt"
      fi
    done
  done
done

/usr/bin/python3 - "$out" "$rounds" <<'PY'
import glob, json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
times = {}  # (ranks, op, bytes, variant) -> [time per round]
speedups = {}  # (ranks, op, bytes, buffers, in_place) -> [speedup over mpi_best per round]
for path in glob.glob(f"{out}/meshcomm_*.json"):
    for r in json.load(open(path)):
        key = (r["ranks"], r["op"], r["bytes"])
        if r["algo"] == "mpi_best":
            if not r["in_place"]:
                times.setdefault(key + ("mpi_best",), []).append(r["time_us"])
        elif r["algo"] == "auto":
            placement = "" if not r["in_place"] else " in place"
            times.setdefault(key + (r["buffers"] + placement,), []).append(r["time_us"])
            speedups.setdefault(key + (r["buffers"], r["in_place"]), []).append(r["speedup"])

osu = {}
for path in glob.glob(f"{out}/osu_*.txt"):
    for line in open(path):
        op, ranks, size, latency = line.split()
        ranks, size = int(ranks), int(size)
        # OSU's size per rank's block (all-gather, all-to-all) or the whole buffer, as meshcomm's.
        bytes_ = size * ranks if op in ("all_gather", "alltoall") else size
        osu.setdefault((ranks, op, bytes_), []).append(float(latency))

def median(values):
    return statistics.median(values) if values else float("nan")

print(f"# medians of {rounds} rounds; x = mpi_best / auto, paired per repeat (out / in place); "
      "* marks auto below 0.95x mpi_best")
header = f"{'np':>3} {'operation':<15} {'bytes':>9} {'mpi_best':>10} {'auto user':>10} {'x user':>13} " \
         f"{'auto shared':>12} {'x shared':>13}"
print(header + (f" {'OSU max':>10} {'OSU/user':>9}" if osu else ""))
for ranks, op, bytes_ in sorted({k[:3] for k in times}):
    key = (ranks, op, bytes_)
    def ratio(buffers):
        out_x = median(speedups.get(key + (buffers, False), []))
        in_x = median(speedups.get(key + (buffers, True), []))
        mark = "*" if min(out_x, in_x if in_x == in_x else out_x) < 0.95 else " "
        return f"{out_x:5.2f}/{in_x:5.2f}{mark}"
    user = median(times.get(key + ("user",), []))
    row = (f"{ranks:>3} {op:<15} {bytes_:>9} {median(times.get(key + ('mpi_best',), [])):>10.2f} {user:>10.2f} "
           f"{ratio('user'):>13} {median(times.get(key + ('shared',), [])):>12.2f} {ratio('shared'):>13}")
    if osu:
        # osu_bcast broadcasts a buffer nobody writes between calls: meshcomm's in-place call of
        # data at rest, where out of place its root first copies the input over (broadcast_perf).
        versus = median(times.get(key + ("user in place",), [])) if op == "broadcast" else user
        osu_time = median(osu.get(key, []))
        row += f" {osu_time:>10.2f} {osu_time / versus:>9.2f}"
    print(row)
PY
