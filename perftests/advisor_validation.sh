#!/usr/bin/env bash
# Calibrates meshcomm-advise on this machine and checks its predictions against measurements
# taken apart from the calibration:
#   1. the perftests (all-gather, reduce-scatter, all-reduce, all-to-all, send-recv) at each -np,
#      run three times: the first two calibrate, the third is predicted;
#   2. layer_perf on one rank (five model shapes, attention-heavy to GEMM-heavy, and one whose
#      dense kernel mostly visits masked pairs) gives the compute speeds, and one of those shapes on 2, 3 and 4 ranks how much slower ranks compute
#      beside each other (fsdp only) and what the exchanges' calls cost (sp only);
#   3. layer_perf on the validation meshes at -np 2, 3 and 4, each case's step a median of repeats,
#      is predicted from the calibration, and each scenario's predicted best is measured against
#      its measured best.
#
#   bash perftests/advisor_validation.sh [build-dir] [output-dir]
#
# Runs take about 6 minutes on 2 cores; ranks beyond the cores are oversubscribed, as the
# calibration records (cores_per_node) and the model assumes.
set -euo pipefail

build=${1:-build}
out=${2:-advisor_validation}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/mpi_environment.sh"
mkdir -p "$out"
advise="$build/advisor/meshcomm-advise"

for round in calibrate1 calibrate2 validate; do
  for np in 2 3 4; do
    for op in all_gather reduce_scatter all_reduce alltoall sendrecv; do
      launch_ranks "$np" "$build/perftests/${op}_perf" -b 1K -e 16M -f 2 -n 10 -w 2 --repeat 5 --baseline none \
        --json "$out/${round}_${op}_np${np}.json" >/dev/null
    done
  done
done

model=(--layers 2 --heads 4 --vocab 64 -n 2 -w 1 --repeat 5)
cases_all=full/ring,full/all_gather,full/heads,sliding/sequence,sliding/heads
cases_no_heads=full/ring,full/all_gather,sliding/sequence
# Compute speeds: five shapes on one rank, attention-heavy to GEMM-heavy, and a long sequence with
# a 4-key window, whose steps are mostly the dense kernel visiting masked pairs; then how much slower
# ranks compute beside each other on this node (the mid shape, fsdp only), and what each sp
# exchange's calls cost beyond their messages (the mid shape, sp only). Two launches each.
compute_shapes=(
  "small --width 64 --hidden 512 --seq 192 --window 48 --batch 4"
  "large --width 128 --hidden 512 --seq 384 --window 48 --batch 2"
  "wide --width 256 --hidden 1024 --seq 64 --window 16 --batch 16"
  "mid --width 128 --hidden 512 --seq 96 --window 24 --batch 12"
  "scan --width 64 --hidden 256 --seq 512 --window 4 --batch 2"
)
for round in 1 2; do
  for entry in "${compute_shapes[@]}"; do
    read -r name shape <<<"$entry"
    # shellcheck disable=SC2086
    launch_ranks 1 "$build/perftests/layer_perf" "${model[@]}" $shape --mesh-dim 1,1,1,1 --cases "$cases_all" \
      --json "$out/compute_${name}_$round.json" >/dev/null
  done
  for np in 2 3 4; do
    launch_ranks "$np" "$build/perftests/layer_perf" "${model[@]}" --width 128 --hidden 512 --seq 96 --window 24 \
      --batch 12 --mesh-dim "1,$np,1,1" --fsdp-axes fsdp --cases "$cases_all" \
      --json "$out/compute_shared_np${np}_$round.json" >/dev/null
  done
  for np in 2 4; do  # what each exchange call costs beyond its messages: the mid shape, sp only
    launch_ranks "$np" "$build/perftests/layer_perf" "${model[@]}" --width 128 --hidden 512 --seq 96 --window 24 \
      --batch 12 --mesh-dim "1,1,1,$np" --fsdp-axes fsdp --cases "$cases_all" \
      --json "$out/compute_exchange_np${np}_$round.json" >/dev/null
  done
done

# mesh-dim fsdp-axes cases
meshes=(
  "1,2,1,1 fsdp $cases_all" "2,1,1,1 fsdp $cases_all" "1,1,2,1 fsdp $cases_all" "1,1,1,2 fsdp $cases_all"
  "1,1,1,2 fsdp,sp $cases_all"
  "1,3,1,1 fsdp $cases_all" "3,1,1,1 fsdp $cases_all" "1,1,1,3 fsdp $cases_no_heads"
  "1,4,1,1 fsdp $cases_all" "2,2,1,1 fsdp $cases_all" "1,2,2,1 fsdp $cases_all" "1,2,1,2 fsdp $cases_all"
  "1,2,1,2 fsdp,sp $cases_all" "1,1,2,2 fsdp $cases_all" "1,1,1,4 fsdp $cases_all" "1,1,4,1 fsdp $cases_no_heads"
)
# Three launches of each: runs differ more than the repeats inside one, so each case counts at the
# median of its runs.
for round in 1 2 3; do
  for entry in "${meshes[@]}"; do
    read -r mesh axes cases <<<"$entry"
    IFS=, read -ra sizes <<<"$mesh"
    np=$((sizes[0] * sizes[1] * sizes[2] * sizes[3]))
    launch_ranks "$np" "$build/perftests/layer_perf" "${model[@]}" --width 128 --hidden 512 --seq 192 --window 48 \
      --batch 12 --mesh-dim "$mesh" --fsdp-axes "$axes" --cases "$cases" \
      --json "$out/steps_${mesh//,/_}_${axes//,/_}_$round.json" >/dev/null
  done
done

"$advise" calibrate "$out"/calibrate[12]_*.json "$out"/compute_*.json --output "$out/calib.json"
"$advise" validate --calibration "$out/calib.json" "$out"/validate_*.json "$out"/steps_*.json
