#!/usr/bin/env bash
# meshcomm's ucx backend beside UCX's own benchmark, on this node: ucx_perftest (tag_lat,
# tag_bw) and pingpong_perf / bandwidth_perf --backend ucx alternate over several rounds with the
# same UCX settings (error mode peer, shared memory kept, keepalive 1 s); the table gives medians.
#
#   bash perftests/ucx_baseline.sh [build-dir] [rounds]
#
# Latency is half the ping-pong round trip (what tag_lat reports). Bandwidth is a one-way stream
# of messages on both sides: bandwidth_perf's beside tag_bw's.
set -euo pipefail

build=${1:-build}
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/mpi_environment.sh"
if ! command -v ucx_perftest > /dev/null; then
  echo "ucx_baseline: ucx_perftest is missing (tools/setup.sh installs ucx-utils)" >&2
  exit 1
fi

export UCX_MM_ERROR_HANDLING=y UCX_KEEPALIVE_INTERVAL=1s  # what the ucx backend sets
port=13500
sizes=(8 4096 1048576 4194304 16777216 67108864)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# ucx_perftest TEST SIZE: the server in the background, the client's final line.
ucx_perftest_once() {
  port=$((port + 1))
  ucx_perftest -p "$port" -e > /dev/null 2>&1 &
  local server=$!
  sleep 0.3
  local iterations=20000
  (($2 >= 1048576)) && iterations=200
  ucx_perftest localhost -p "$port" -e -t "$1" -s "$2" -n "$iterations" -w 20 -f 2> /dev/null | tail -1
  wait "$server" || true
}

for ((round = 1; round <= rounds; ++round)); do
  for size in "${sizes[@]}"; do
    # tag_lat: the average latency (us), as pingpong_perf's time is an average over its round
    # trips; tag_bw: the overall bandwidth (MiB/s -> GB/s).
    if ((size <= 4096)); then
      ucx_perftest_once tag_lat "$size" | awk -v s="$size" '{print "ucx_perftest", s, $3}' >> "$results"
    else
      ucx_perftest_once tag_bw "$size" |
        awk -v s="$size" '{printf "ucx_perftest %s %.3f\n", s, $6 * 1.048576 / 1000}' >> "$results"
    fi
  done
  # As many timed round trips or messages as ucx_perftest makes: 20000 up to 4 KiB, 200 from 1 MiB.
  {
    mpirun -np 2 "$build/perftests/pingpong_perf" --backend ucx -b 8 -e 4K -f 2 -n 20000 -w 1000 \
      --buffers user --baseline none
    mpirun -np 2 "$build/perftests/bandwidth_perf" --backend ucx -b 1M -e 64M -f 2 -n 200 -w 20 \
      --buffers user --baseline none
  } | awk '$1 ~ /^[0-9]+$/ {print $1, $7, $9}' \
    | while read -r size time busbw; do
        for wanted in "${sizes[@]}"; do
          if [ "$size" = "$wanted" ]; then
            if ((size <= 4096)); then
              awk -v s="$size" -v t="$time" 'BEGIN {printf "meshcomm %s %.3f\n", s, t / 2}'
            else
              echo "meshcomm $size $busbw"
            fi
          fi
        done
      done >> "$results"
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf "# %d rounds alternated, medians; UCX_MM_ERROR_HANDLING=y UCX_KEEPALIVE_INTERVAL=1s, ucx_perftest -e\n" "$rounds"
printf "%10s %18s %18s %10s\n" "size (B)" "ucx_perftest" "meshcomm ucx" "ratio"
for size in "${sizes[@]}"; do
  theirs=$(awk -v s="$size" '$1 == "ucx_perftest" && $2 == s {print $3}' "$results" | median)
  ours=$(awk -v s="$size" '$1 == "meshcomm" && $2 == s {print $3}' "$results" | median)
  if ((size <= 4096)); then
    awk -v s="$size" -v a="$theirs" -v b="$ours" \
      'BEGIN {printf "%10s %15.3f us %15.3f us %+9.3f us\n", s, a, b, b - a}'
  else
    awk -v s="$size" -v a="$theirs" -v b="$ours" \
      'BEGIN {printf "%10s %13.2f GB/s %13.2f GB/s %9.2fx\n", s, a, b, b / a}'
  fi
done
