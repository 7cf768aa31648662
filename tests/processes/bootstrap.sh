#!/usr/bin/env bash
# Starts NP processes of bootstrap_probe the way launcher LAUNCH would, and passes when every rank
# created a communicator and checked its collectives; with ABSENT, when every rank but ABSENT
# failed within its timeout with an error that names ABSENT as the rank that never arrived.
#   bootstrap.sh LAUNCH PROBE NP [ABSENT]
#   LAUNCH: env    (torchrun's variables: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
#           caller (a CallerBootstrap over files in a fresh directory, ranks from the same variables)
#           pmix   (mpirun, with MESHCOMM_BOOTSTRAP=pmix: no MPI in the probe)
set -uo pipefail
launch=$1 probe=$2 np=$3 absent=${4:--1}
export MESHCOMM_TIMEOUT=${MESHCOMM_TIMEOUT_OVERRIDE:-3s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

here=$(dirname "$0")

case $launch in
  env)
    output=$(MESHCOMM_BOOTSTRAP=env bash "$here/launch_env.sh" "$np" "$probe" --absent "$absent")
    ;;
  caller)
    output=$(bash "$here/launch_env.sh" "$np" "$probe" --caller "$work" --absent "$absent")
    ;;
  pmix)
    output=$(MESHCOMM_BOOTSTRAP=pmix mpirun --oversubscribe -np "$np" "$probe" --absent "$absent" 2>&1)
    ;;
  *)
    echo "unknown launch '$launch': give env, caller or pmix"
    exit 2
    ;;
esac
elapsed=$(($(date +%s) - started))
printf '%s\n' "$output"
echo "($launch, np $np, absent $absent: ${elapsed} s)"

status=0
for ((rank = 0; rank < np; ++rank)); do
  if ((rank == absent)); then
    continue
  elif ((absent < 0)); then
    grep -q "^rank $rank: ok:" <<<"$output" || { echo "rank $rank did not finish its collectives"; status=1; }
  elif ! grep -qE "^rank $rank: error: .*timeout.*rank $absent( \\(|,| never arrived)" <<<"$output"; then
    echo "rank $rank did not fail with a timeout naming rank $absent"
    status=1
  fi
done
exit $status
