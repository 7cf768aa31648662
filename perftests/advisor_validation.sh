#!/usr/bin/env bash
# Calibrates meshcomm-advise on this machine and checks its predictions against measurements
# taken apart from the calibration:
#   1. the perftests (all-gather, reduce-scatter, all-reduce, all-to-all, send-recv) at each -np,
#      run twice: the first run calibrates, the second is predicted;
#   2. layer_perf on one rank (two model sizes) gives the compute speeds;
#   3. layer_perf on the validation meshes at -np 2, 3 and 4, each case's step a median of repeats,
#      is predicted from the calibration, and each scenario's predicted best is measured against
#      its measured best.
#
#   bash perftests/advisor_validation.sh [build-dir] [output-dir]
#
# Runs take about 15 minutes on 2 cores; ranks beyond the cores are oversubscribed, as the
# calibration records (cores_per_node) and the model assumes.
set -euo pipefail

build=${1:-build}
out=${2:-advisor_validation}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/mpi_environment.sh"
mkdir -p "$out"
advise="$build/advisor/meshcomm-advise"

for round in calibrate validate; do
  for np in 2 3 4; do
    for op in all_gather reduce_scatter all_reduce alltoall sendrecv; do
      launch_ranks "$np" "$build/perftests/${op}_perf" -b 1K -e 16M -f 4 -n 10 -w 2 --repeat 5 --baseline none \
        --json "$out/${round}_${op}_np${np}.json" >/dev/null
    done
  done
done

model=(--layers 2 --heads 4 --hidden 512 --vocab 64 --window 48 -n 2 -w 1 --repeat 5)
cases_all=full/ring,full/all_gather,full/heads,sliding/sequence,sliding/heads
cases_no_heads=full/ring,full/all_gather,sliding/sequence
launch_ranks 1 "$build/perftests/layer_perf" "${model[@]}" --width 64 --seq 192 --batch 4 --mesh-dim 1,1,1,1 \
  --cases "$cases_all" --json "$out/compute_small.json" >/dev/null
launch_ranks 1 "$build/perftests/layer_perf" "${model[@]}" --width 128 --seq 384 --batch 2 --mesh-dim 1,1,1,1 \
  --cases "$cases_all" --json "$out/compute_large.json" >/dev/null

# mesh-dim fsdp-axes cases
meshes=(
  "1,2,1,1 fsdp $cases_all" "2,1,1,1 fsdp $cases_all" "1,1,2,1 fsdp $cases_all" "1,1,1,2 fsdp $cases_all"
  "1,1,1,2 fsdp,sp $cases_all"
  "1,3,1,1 fsdp $cases_all" "3,1,1,1 fsdp $cases_all" "1,1,1,3 fsdp $cases_no_heads"
  "1,4,1,1 fsdp $cases_all" "2,2,1,1 fsdp $cases_all" "1,2,2,1 fsdp $cases_all" "1,2,1,2 fsdp $cases_all"
  "1,2,1,2 fsdp,sp $cases_all" "1,1,2,2 fsdp $cases_all" "1,1,1,4 fsdp $cases_all" "1,1,4,1 fsdp $cases_no_heads"
)
for entry in "${meshes[@]}"; do
  read -r mesh axes cases <<<"$entry"
  IFS=, read -ra sizes <<<"$mesh"
  np=$((sizes[0] * sizes[1] * sizes[2] * sizes[3]))
  launch_ranks "$np" "$build/perftests/layer_perf" "${model[@]}" --width 128 --seq 192 --batch 12 --mesh-dim "$mesh" \
    --fsdp-axes "$axes" --cases "$cases" --json "$out/steps_${mesh//,/_}_${axes//,/_}.json" >/dev/null
done

"$advise" calibrate "$out"/calibrate_*.json "$out"/compute_*.json --output "$out/calib.json"
"$advise" validate --calibration "$out/calib.json" "$out"/validate_*.json "$out"/steps_*.json
