"""Collectives through the torch.distributed backend "meshcomm", beside meshcomm's own C++ call and torch's gloo, in one run.

    mpirun -np 2 python3 perftests/torch_collectives_perf.py [--sizes 1M,4M,16M,64M] [--json out.json]

For each operation and size (bytes of each rank's tensor: the input of all_reduce, broadcast,
all_to_all and reduce_scatter, the output of all_gather), three things are timed alternately over
--rounds rounds of --iters calls, in the same processes and on the same tensors: meshcomm's C++
call on the group's communicator (each call waited for, as the C++ perftests do), the same call
through torch.distributed, and gloo's. Each round's time is the slowest rank's mean; the table
shows each one's median, the median of the rounds' torch / C++ ratios (what the plugin adds), and
gloo / torch. Results are checked once per size against gloo's.
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


def check(operation, tensors, gloo):
    """One call through meshcomm and gloo on the same integer-valued data: the results must be equal."""
    source, target = tensors
    rank, world = dist.get_rank(), dist.get_world_size()
    results = []
    for group in (None, gloo):
        source.copy_(torch.arange(source.numel()).remainder(7) + rank)
        target.zero_()
        call(operation, group, tensors)
        in_place = operation in ("all_reduce", "broadcast") or (operation == "reduce_scatter" and group is not None)
        result = (source if in_place else target).clone()
        if operation == "reduce_scatter" and group is not None:  # gloo's all-reduce holds every rank's block
            result = result.chunk(world)[rank]
        results.append(result)
    if not torch.equal(*results):
        raise SystemExit(f"rank {rank}: {operation} of {source.numel() * 4} bytes through meshcomm differs from gloo's")
    source.fill_(1)


def timed(operation, group, tensors, iters, gloo):
    dist.barrier(group=gloo)
    start = time.perf_counter()
    for _ in range(iters):
        call(operation, group, tensors)
    elapsed = torch.tensor([(time.perf_counter() - start) / iters * 1e6])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=gloo)
    return elapsed.item()


def timed_direct(operation, group_name, tensors, iters, gloo):
    """µs per call of meshcomm's own C++ call, the slowest rank's mean."""
    dist.barrier(group=gloo)
    source, target = tensors
    elapsed = torch.tensor([mt._C._time_direct_calls(group_name, operation, source, target, iters) / iters * 1e6])
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
    ours_name = mt.group_name()
    world, rank = dist.get_world_size(), dist.get_rank()
    records = []
    if rank == 0:
        print(f"{'operation':<15}{'bytes':>10}{'C++ us':>10}{'torch us':>10}{'gloo us':>11}{'torch/C++':>11}"
              f"{'gloo/torch':>12}")
    for operation in args.ops.split(","):
        for size in (parse_size(text) for text in args.sizes.split(",")):
            tensors = tensors_for(operation, size, world)
            check(operation, tensors, gloo)
            for group in (None, gloo):  # warm up both
                for _ in range(args.warmup):
                    call(operation, group, tensors)
            for _ in range(args.warmup):
                mt._C._time_direct_calls(ours_name, operation, *tensors, 1)
            times = {"cpp": [], "meshcomm": [], "gloo": []}
            for _ in range(args.rounds):
                times["cpp"].append(timed_direct(operation, ours_name, tensors, args.iters, gloo))
                times["meshcomm"].append(timed(operation, None, tensors, args.iters, gloo))
                times["gloo"].append(timed(operation, gloo, tensors, args.iters, gloo))
            cpp, ours, theirs = (statistics.median(times[name]) for name in ("cpp", "meshcomm", "gloo"))
            over_cpp = statistics.median(t / c for t, c in zip(times["meshcomm"], times["cpp"]))
            records.append({"operation": operation, "bytes": size, "ranks": world, "cpp_us": cpp, "meshcomm_us": ours,
                            "gloo_us": theirs, "torch_over_cpp": over_cpp, "rounds": times})
            if rank == 0:
                print(f"{operation:<15}{size:>10}{cpp:>10.1f}{ours:>10.1f}{theirs:>11.1f}{over_cpp:>11.2f}"
                      f"{theirs / ours:>12.2f}")
    if rank == 0 and args.json:
        with open(args.json, "w") as out:
            json.dump(records, out, indent=1)
    # Before the interpreter ends: gloo's threads may still drop tensors of finished calls, and
    # doing so during finalization aborts the process.
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
