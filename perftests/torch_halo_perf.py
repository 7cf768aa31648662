"""Halo exchange through the torch plugin at anemoi's o96 size, for comparison with halo_perf.

    mpirun -np 2 python3 perftests/torch_halo_perf.py [--seq 40320 --channels 1024 --window 512]

Times, per exchange (median of --repeat runs of --iters, slowest rank): the in-place op
``halo_exchange_`` on an extended float32 tensor for each --strategies entry, and the functional
``halo_exchange`` (which also allocates the extended tensor and copies the shard into it).
"""

import argparse
import statistics
import time

import torch
import torch.distributed as dist

import meshcomm.torch as mt


def timed(run, iters, gloo):
    dist.barrier(group=gloo)
    start = time.perf_counter()
    for _ in range(iters):
        run()
    elapsed = torch.tensor([(time.perf_counter() - start) / iters * 1e6])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=gloo)
    return elapsed.item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=40320)
    parser.add_argument("--channels", type=int, default=1024)
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--strategies", default="p2p,neighbor_alltoallv,rma")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group(mt.BACKEND)
    gloo = dist.new_group(backend="gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    shard = args.seq // size
    w = args.window
    extended = torch.zeros(shard + 2 * w, args.channels)
    extended[w:w + shard] = rank
    x = torch.full((shard, args.channels), float(rank))
    runs = {f"halo_exchange_ ({s})": (lambda s=s: mt.halo_exchange_(extended, None, w, w, strategy=s))
            for s in args.strategies.split(",")}
    runs["halo_exchange (functional)"] = lambda: mt.halo_exchange(x, None, w, w)
    if rank == 0:
        print(f"o96: {args.seq} rows x {args.channels} f32, window {w} each side, {size} ranks")
        print(f"{'call':<34}{'us per exchange':>16}")
    for name, run in runs.items():
        try:
            run()
        except RuntimeError as error:
            if rank == 0:
                print(f"{name:<34}{'(' + str(error).split(':')[-1].strip()[:60] + ')':>16}")
            continue
        times = [timed(run, args.iters, gloo) for _ in range(args.repeat)]
        if rank == 0:
            print(f"{name:<34}{statistics.median(times):>16.1f}")
    left = extended[:w]
    assert rank == 0 or torch.all(left == rank - 1), "halo rows hold the wrong rank's rows"
    # Before the interpreter ends: gloo's threads may still drop tensors of finished calls, and
    # doing so during finalization aborts the process.
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
