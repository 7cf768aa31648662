#!/usr/bin/env bash
# The torch plugin against meshcomm's own C++ perftests (ucx backend, user buffers: the tensors a
# trainer has) and against gloo, at 2 processes: ROUNDS rounds, each running the C++ perftest of
# every operation and then torch_collectives_perf.py, so that both see the same machine state;
# the table shows medians, torch / C++ perftest (1.00 = no cost from the plugin), and torch /
# direct: the paired ratio against meshcomm's call timed inside the same torch processes
# (torch_collectives_perf.py's own comparison, free of launch-to-launch drift).
#   perftests/compare_torch.sh [SIZES=1M,4M,16M,64M] [ROUNDS=3] [ITERS=50]
# Both sides time ITERS calls after 5 untimed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1M,4M,16M,64M}
rounds=${2:-3}
iters=${3:-50}
source tools/mpi_environment.sh
export PYTHONPATH=$PWD/build/python
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
first=${sizes%%,*}
last=${sizes##*,}
for ((round = 0; round < rounds; ++round)); do
  for perftest in all_reduce all_gather reduce_scatter alltoall broadcast; do
    mpirun -np 2 "build/perftests/${perftest}_perf" --backend ucx --buffers user --baseline none \
      -b "$first" -e "$last" -f 4 -n "$iters" -w 5 --json "$out/cpp_${perftest}_$round.json" >/dev/null
  done
  mpirun -np 2 /usr/bin/python3 perftests/torch_collectives_perf.py --sizes "$sizes" --rounds 1 --iters "$iters" --warmup 5 \
    --json "$out/torch_$round.json" >/dev/null 2>&1
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import glob, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
names = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
         "alltoall": "all_to_all", "broadcast": "broadcast"}
in_place = {"all_reduce": True, "broadcast": True}
cpp, torch_ours, gloo, paired = {}, {}, {}, {}
for path in glob.glob(f"{out}/cpp_*.json"):
    for record in json.load(open(path)):
        operation = names.get(record["op"], record["op"])
        if record["in_place"] != in_place.get(operation, False) and record["op"] != "broadcast":
            continue
        cpp.setdefault((operation, record["bytes"]), []).append(record["time_us"])
for path in glob.glob(f"{out}/torch_*.json"):
    for record in json.load(open(path)):
        key = (record["operation"], record["bytes"])
        torch_ours.setdefault(key, []).append(record["meshcomm_us"])
        gloo.setdefault(key, []).append(record["gloo_us"])
        paired.setdefault(key, []).append(record["torch_over_cpp"])
print(f"{'operation':<15}{'bytes':>10}{'C++ us':>10}{'torch us':>10}{'gloo us':>10}{'torch/C++':>11}"
      f"{'torch/direct':>14}{'gloo/torch':>12}")
for key in sorted(torch_ours):
    if key not in cpp:
        continue
    c, t, g = (statistics.median(values[key]) for values in (cpp, torch_ours, gloo))
    direct = statistics.median(paired[key])
    print(f"{key[0]:<15}{key[1]:>10}{c:>10.1f}{t:>10.1f}{g:>10.1f}{t / c:>11.2f}{direct:>14.2f}{g / t:>12.2f}")
PY
