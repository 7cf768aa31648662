#!/usr/bin/env bash
# Runs late_rank_probe under mpirun -np 2 with a short timeout and passes when both ranks report
# an error (the late one too, instead of waiting forever), with the output for the log. Where the
# library asks the launcher's PMIx server (MESHCOMM_TEST_PMIX=ON), each error must name the other
# rank as the one that never arrived at the step it timed out in.
#   late_rank.sh MPIEXEC PROBE STEP
set -uo pipefail
mpiexec=$1 probe=$2 step=$3
reported=$(mktemp -u "${TMPDIR:-/tmp}/meshcomm-late-rank.XXXXXX")
trap 'rm -f "$reported"' EXIT
output=$(MESHCOMM_TIMEOUT=2s "$mpiexec" -np 2 "$probe" "$step" 4 "$reported" 2>&1)
printf '%s\n' "$output"
for rank in 0 1; do
  if ! grep -q "^rank $rank: error: .*timeout" <<<"$output"; then
    echo "rank $rank did not report a timeout for a $step with a late rank"
    exit 1
  fi
done
if [[ "${MESHCOMM_TEST_PMIX:-OFF}" == ON ]]; then
  for rank in 0 1; do
    other=$((1 - rank))
    if ! grep -qE "^rank $rank: error: .*timeout.*rank $other (never arrived at this step|has not joined)" <<<"$output"; then
      echo "rank $rank's error does not name rank $other as the one that never arrived"
      exit 1
    fi
  done
  echo "both ranks failed the $step with a timeout naming the other"
  exit 0
fi
echo "both ranks failed the $step with a timeout"
