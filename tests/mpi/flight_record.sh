#!/usr/bin/env bash
# Runs flight_record_probe in MODE under mpirun -np 2, then tools/meshcomm-trace-merge on the
# records the ranks wrote, and checks that it names the first diverging collective, the ranks
# missing from it and those on which it did not complete, as expected. Every record must hold the
# time by which the collective both ranks finished first was seen complete.
#   flight_record.sh MPIEXEC PROBE MODE
set -uo pipefail
mpiexec=$1 probe=$2 mode=$3
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
records=$(mktemp -d)
trap 'rm -rf "$records"' EXIT
MESHCOMM_TIMEOUT=2s MESHCOMM_TRACE_DIR=$records "$mpiexec" -np 2 "$probe" "$mode" 2>&1
for record in "$records"/meshcomm-trace-*.json; do
  /usr/bin/python3 -c 'import json, sys
calls = json.load(open(sys.argv[1]))["calls"]
first = next(c for c in calls if c.get("collective") == 0)
sys.exit(0 if first["completed_by_ns"] >= first["started_ns"] else 1)' "$record" ||
    { echo "$record: collective #0 has no completion time after its start"; exit 1; }
done
merged=$(/usr/bin/python3 "$source_dir/tools/meshcomm-trace-merge" "$records" 2>&1)
printf '%s\n' "$merged"
case "$mode" in
  other) expected=("first diverging collective: #1" "rank 0: all_gather 8192 B f32" "rank 1: barrier 0 B"
                   "started but not seen complete on rank(s) 0, 1") ;;
  missing) expected=("first diverging collective: #1" "rank 0: all_gather 8192 B f32" "rank 1: never started it"
                     "missing from it: rank(s) 1" "started but not seen complete on rank(s) 0") ;;
esac
for line in "${expected[@]}"; do
  grep -qF -- "$line" <<<"$merged" || { echo "the merged record does not say: $line"; exit 1; }
done
echo "the merged record names the first diverging collective"
