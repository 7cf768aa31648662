"""Collectives through the torch.distributed backend "meshcomm" beside torch's gloo, in one run.

    mpirun -np 2 python3 perftests/torch_collectives_perf.py [--sizes 1M,4M,16M,64M] [--json out.json]

For each operation and size (bytes of each rank's tensor: the input of all_reduce, broadcast,
all_to_all and reduce_scatter, the output of all_gather), meshcomm and gloo are timed alternately
over --rounds rounds of --iters calls; each round's time is the slowest rank's mean, and the table
shows each backend's median and gloo / meshcomm. Results are checked once per size against gloo's.
"""

import argparse
import warnings
import json
import statistics
import time

import torch
import torch.distributed as dist

import meshcomm.torch as mt

OPERATIONS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    return int(text[:-1] if text[-1].upper() in "KMG" else text) * scale


def call(operation, group, tensors):
    source, target = tensors
    if operation == "all_reduce":
        dist.all_reduce(source, group=group)
    elif operation == "all_gather":
        # FSDP's call; gloo has only the list form, which is what a trainer on gloo gets.
        if group is None:
            dist._all_gather_base(target, source)
        else:
            dist.all_gather(list(target.chunk(dist.get_world_size(group))), source, group=group)
    elif operation == "reduce_scatter":
        # gloo has no reduce_scatter: it is its all_reduce there, as a trainer on gloo would do it.
        if group is None:
            dist._reduce_scatter_base(target, source)
        else:
            dist.all_reduce(source, group=group)
    elif operation == "all_to_all":
        dist.all_to_all_single(target, source, group=group)
    elif operation == "broadcast":
        dist.broadcast(source, src=0, group=group)


def tensors_for(operation, size_bytes, world):
    elements = size_bytes // 4
    if operation == "all_gather":
        shard = elements // world
        return torch.ones(shard), torch.empty(shard * world)
    if operation == "reduce_scatter":
        return torch.ones(elements), torch.empty(elements // world)
    return torch.ones(elements), torch.empty(elements)


def timed(operation, group, tensors, iters, gloo):
    dist.barrier(group=gloo)
    start = time.perf_counter()
    for _ in range(iters):
        call(operation, group, tensors)
    elapsed = torch.tensor([(time.perf_counter() - start) / iters * 1e6])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=gloo)
    return elapsed.item()


def main():
    warnings.filterwarnings("ignore", message=".*is a private function and will be deprecated.*")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,4M,16M,64M")
    parser.add_argument("--ops", default=",".join(OPERATIONS))
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls of each backend first")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()

    dist.init_process_group(mt.BACKEND)
    gloo = dist.new_group(backend="gloo")
    world, rank = dist.get_world_size(), dist.get_rank()
    records = []
    if rank == 0:
        print(f"{'operation':<15}{'bytes':>10}{'meshcomm us':>14}{'gloo us':>12}{'gloo/meshcomm':>15}")
    for operation in args.ops.split(","):
        for size in (parse_size(text) for text in args.sizes.split(",")):
            tensors = tensors_for(operation, size, world)
            for group in (None, gloo):  # warm up both
                for _ in range(args.warmup):
                    call(operation, group, tensors)
            times = {"meshcomm": [], "gloo": []}
            for _ in range(args.rounds):
                times["meshcomm"].append(timed(operation, None, tensors, args.iters, gloo))
                times["gloo"].append(timed(operation, gloo, tensors, args.iters, gloo))
            ours, theirs = statistics.median(times["meshcomm"]), statistics.median(times["gloo"])
            records.append({"operation": operation, "bytes": size, "ranks": world, "meshcomm_us": ours,
                            "gloo_us": theirs, "rounds": times})
            if rank == 0:
                print(f"{operation:<15}{size:>10}{ours:>14.1f}{theirs:>12.1f}{theirs / ours:>15.2f}")
    if rank == 0 and args.json:
        with open(args.json, "w") as out:
            json.dump(records, out, indent=1)


if __name__ == "__main__":
    main()
