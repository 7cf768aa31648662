#!/usr/bin/env bash
# Starts NP copies of PROGRAM the way torchrun does (RANK, WORLD_SIZE, LOCAL_RANK,
# LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT on a free port), prints their output in rank order,
# and exits with the first nonzero exit status among them.
#   launch_env.sh NP PROGRAM [ARGS...]
set -uo pipefail
np=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A free port whose successor is free too: meshcomm's EnvBootstrap listens on MASTER_PORT + 1.
master_port=$(/usr/bin/python3 -c '
import socket
while True:
    first, second = socket.socket(), socket.socket()
    first.bind(("127.0.0.1", 0))
    port = first.getsockname()[1]
    try:
        second.bind(("127.0.0.1", port + 1))
        print(port)
        break
    except OSError:
        continue
    finally:
        first.close()
        second.close()
')
pids=()
for ((rank = 0; rank < np; ++rank)); do
  RANK=$rank WORLD_SIZE=$np LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$np MASTER_ADDR=127.0.0.1 MASTER_PORT=$master_port \
    "$@" >"$work/out.$rank" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid"
  code=$?
  ((status == 0)) && status=$code
done
for ((rank = 0; rank < np; ++rank)); do cat "$work/out.$rank"; done
exit $status
