"""One process of the torch plugin's tests: ``torch_worker.py CASE[,CASE...]``, started by
test_torch_backend.py with torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). The
cases run one after another in one process group, as a trainer's calls do. Each case checks
meshcomm's results against gloo's on the same tensors (or against an independent computation where
gloo lacks the call), exactly, and prints "rank R: CASE ok" at the end; the first case that fails
ends the process with its traceback."""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist

import meshcomm.torch as mt

TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("WORKER_TIMEOUT", "60")))


def values(shape, dtype, rank, salt=0):
    """Small integers, distinct per rank and position: every sum and product below is exact."""
    count = 1
    for size in shape:
        count *= size
    base = (torch.arange(count, dtype=torch.int64) * 7 + rank * 3 + salt) % 5 + 1
    return base.reshape(shape).to(dtype)


def same(a, b, what):
    if a.dtype != b.dtype or a.shape != b.shape or not torch.equal(a, b):
        raise AssertionError(f"{what}: meshcomm gave {a.tolist()}, expected {b.tolist()}")


def case_collectives(rank, size):
    gloo = dist.new_group(backend="gloo")
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.uint8):
        exact_in_gloo = dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8)
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX):
            mine = values((5, 3), dtype, rank)
            reference = mine.clone() if exact_in_gloo else mine.double()
            dist.all_reduce(mine, op=op)
            dist.all_reduce(reference, op=op, group=gloo)
            same(mine, reference.to(dtype), f"all_reduce {op} {dtype}")
        # all_gather_into_tensor (torch 1.13: _all_gather_base) and the list form.
        shard = values((4,), dtype, rank)
        gathered = torch.empty(4 * size, dtype=dtype)
        dist._all_gather_base(gathered, shard)
        expected = torch.cat([values((4,), dtype, other) for other in range(size)])
        same(gathered, expected, f"_all_gather_base {dtype}")
        pieces = [torch.empty(4, dtype=dtype) for _ in range(size)]
        dist.all_gather(pieces, shard)
        same(torch.cat(pieces), expected, f"all_gather {dtype}")
        # reduce_scatter_tensor (_reduce_scatter_base) and the list form, against gloo's all_reduce.
        full = values((size * 3,), dtype, rank, salt=1)
        total = full.clone() if exact_in_gloo else full.double()
        dist.all_reduce(total, group=gloo)
        block = torch.empty(3, dtype=dtype)
        dist._reduce_scatter_base(block, full)
        same(block, total[rank * 3:(rank + 1) * 3].to(dtype), f"_reduce_scatter_base {dtype}")
        block = torch.empty(3, dtype=dtype)
        dist.reduce_scatter(block, list(full.split(3)))
        same(block, total[rank * 3:(rank + 1) * 3].to(dtype), f"reduce_scatter {dtype}")
        # broadcast from the last rank.
        data = values((6,), dtype, rank)
        dist.broadcast(data, src=size - 1)
        same(data, values((6,), dtype, size - 1), f"broadcast {dtype}")
    # Calls composed from meshcomm's collectives: reduce, gather, scatter, the list all-to-all and
    # the coalesced all-reduce, against gloo's.
    for dtype in (torch.float32, torch.int64):
        root = size - 1
        mine, reference = values((7,), dtype, rank), values((7,), dtype, rank)
        dist.reduce(mine, dst=root, op=dist.ReduceOp.MAX)
        dist.reduce(reference, dst=root, op=dist.ReduceOp.MAX, group=gloo)
        if rank == root:
            same(mine, reference, f"reduce {dtype}")
        pieces = [torch.empty(3, dtype=dtype) for _ in range(size)] if rank == root else None
        expected = [torch.empty(3, dtype=dtype) for _ in range(size)] if rank == root else None
        dist.gather(values((3,), dtype, rank), pieces, dst=root)
        dist.gather(values((3,), dtype, rank), expected, dst=root, group=gloo)
        if rank == root:
            same(torch.cat(pieces), torch.cat(expected), f"gather {dtype}")
        sources = [values((4,), dtype, 10 + other) for other in range(size)] if rank == 0 else None
        block = torch.empty(4, dtype=dtype)
        dist.scatter(block, sources, src=0)
        same(block, values((4,), dtype, 10 + rank), f"scatter {dtype}")
        outgoing = [values((peer + 1, 2), dtype, rank * size + peer) for peer in range(size)]
        incoming = [torch.empty((rank + 1, 2), dtype=dtype) for _ in range(size)]
        dist.all_to_all(incoming, outgoing)
        for peer in range(size):
            same(incoming[peer], values((rank + 1, 2), dtype, peer * size + rank), f"all_to_all list {dtype}")
        tensors = [values((5,), dtype, rank), values((2, 3), dtype, rank, salt=2)]
        references = [t.clone() for t in tensors]
        dist.all_reduce_coalesced(tensors)
        dist.all_reduce_coalesced(references, group=gloo)
        for got, want in zip(tensors, references):
            same(got, want, f"all_reduce_coalesced {dtype}")
    # all_to_all_single, equal and uneven, against gloo.
    for dtype in (torch.float32, torch.int64):
        data = values((size * 2, 3), dtype, rank)
        out, reference = torch.empty_like(data), torch.empty_like(data)
        dist.all_to_all_single(out, data)
        dist.all_to_all_single(reference, data, group=gloo)
        same(out, reference, f"all_to_all_single {dtype}")
        send_splits = [(rank + peer) % 3 + 1 for peer in range(size)]
        recv_splits = [(peer + rank) % 3 + 1 for peer in range(size)]
        data = values((sum(send_splits), 2), dtype, rank)
        out = torch.empty((sum(recv_splits), 2), dtype=dtype)
        reference = torch.empty_like(out)
        dist.all_to_all_single(out, data, recv_splits, send_splits)
        dist.all_to_all_single(reference, data, recv_splits, send_splits, group=gloo)
        same(out, reference, f"all_to_all_single uneven {dtype}")
    # send and recv around the ring, started in either order.
    outgoing = values((8,), torch.float32, rank)
    incoming = torch.empty(8)
    receive = dist.irecv(incoming, (rank - 1) % size, tag=3)
    dist.isend(outgoing, (rank + 1) % size, tag=3).wait()
    receive.wait()
    same(incoming, values((8,), torch.float32, (rank - 1) % size), "isend/irecv")
    # A Work is asynchronous and its future completes with the result.
    data = values((1000,), torch.float64, rank)
    work = dist.all_reduce(data, async_op=True)
    future = work.get_future()
    work.wait()
    assert work.is_completed() and work.is_success()
    same(future.wait()[0], sum(values((1000,), torch.float64, other) for other in range(size)), "future")
    # With nobody in wait() or is_completed() (which drive the calls themselves), the group's
    # worker sees a call end, also after idling long enough to park; its future's callbacks run
    # then. Only the future is looked at here.
    for pause in (0.0, 0.1):
        time.sleep(pause)
        data = values((1000,), torch.float64, rank)
        work = dist.all_reduce(data, async_op=True)
        chained = work.get_future().then(lambda done: done.value()[0] * 2)
        deadline = time.monotonic() + 10
        while not chained.done():
            assert time.monotonic() < deadline, f"an async all_reduce never completed without wait() (pause {pause})"
            time.sleep(0.001)
        assert work.is_completed() and work.is_success()
        same(chained.value(), 2 * sum(values((1000,), torch.float64, other) for other in range(size)), "then")
    dist.barrier()
    # The perftests' direct C++ call on the group's communicator: its result, and a bad name refused.
    data = values((1000,), torch.float64, rank)
    assert mt._C._time_direct_calls(mt.group_name(), "all_reduce", data, data, 1) > 0
    same(data, sum(values((1000,), torch.float64, other) for other in range(size)), "direct all_reduce")
    try:
        mt._C._time_direct_calls(mt.group_name(), "all_sum", data, data, 1)
        raise AssertionError("an unknown operation was accepted")
    except RuntimeError as error:
        assert "operation 'all_sum' is not one of all_reduce" in str(error), str(error)


def case_mesh(rank, size):
    dims = "1,-1,2,1"
    groups = mt.init_mesh(dims, ranks_per_node=2, axes=["dp", "fsdp", "tp", "sp", "dp,fsdp"])
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "topo.json")
        subprocess.run([os.environ["MESHCOMM_TOPO"], "--world", str(size), "--ranks-per-node", "2",
                        "--mesh-dim", dims, "--axes", "dp,fsdp", "--json", path], check=True, capture_output=True)
        with open(path) as topo:
            expected = json.load(topo)["groups"]
    for axes, group in groups.items():
        ranks = dist.distributed_c10d._pg_group_ranks[group]
        members = sorted(ranks, key=lambda world_rank: ranks[world_rank])
        mine = [g for g in expected[axes] if rank in g]
        assert members == mine[0], f"{axes}: init_mesh gave {members}, meshcomm's Mesh {mine[0]}"
        total = torch.tensor([float(rank)])
        dist.all_reduce(total, group=group)
        assert total.item() == sum(members), (axes, total.item(), members)


def halo_reference(full, rank, shard, left, right, periodic):
    """The extended shard of `rank` cut from the whole sequence."""
    rows = full.shape[0]
    indices = range(rank * shard - left, (rank + 1) * shard + right)
    parts = []
    for index in indices:
        if 0 <= index < rows:
            parts.append(full[index])
        elif periodic:
            parts.append(full[index % rows])
        else:
            parts.append(torch.zeros_like(full[0]))
    return torch.stack(parts)


class Replicated(torch.autograd.Function):
    """Identity on a tensor every rank holds whole; its gradient is the sum of every rank's."""

    @staticmethod
    def forward(context, tensor, group):
        context.group = group
        return tensor.view_as(tensor)

    @staticmethod
    def backward(context, gradient):
        total = gradient.clone()
        dist.all_reduce(total, group=context.group)
        return total, None


class Gathered(torch.autograd.Function):
    """Every rank's shard, concatenated in rank order; each rank keeps its own shard's gradient."""

    @staticmethod
    def forward(context, shard, group):
        context.rank, context.size = dist.get_rank(group), dist.get_world_size(group)
        parts = [torch.empty_like(shard) for _ in range(context.size)]
        dist.all_gather(parts, shard.contiguous(), group=group)
        return torch.cat(parts)

    @staticmethod
    def backward(context, gradient):
        return gradient.chunk(context.size)[context.rank].contiguous(), None


def distributed_gradcheck(sharded_op, inputs, gloo):
    """gradcheck of a sharded op as the function of whole tensors that every rank computes alike:
    each rank perturbs the same element at the same time, runs its shard, and sees every rank's
    output (gathered through gloo, which is not under test)."""
    def whole(*tensors):
        return Gathered.apply(sharded_op(*(Replicated.apply(t, gloo) for t in tensors)), gloo)
    return torch.autograd.gradcheck(whole, inputs)


def case_halo(rank, size):
    shard, left, right, width = 5, 3, 2, 4
    torch.manual_seed(1)
    full = torch.randn(shard * size, width, dtype=torch.float64)
    for periodic in (False, True):
        x = full[rank * shard:(rank + 1) * shard].clone().requires_grad_(True)
        y = mt.halo_exchange(x, None, left, right, dim=0, periodic=periodic)
        same(y.detach(), halo_reference(full, rank, shard, left, right, periodic), f"halo forward periodic={periodic}")
        # The backward is the adjoint: <halo(x), g> = <x, halo^T(g)> over all ranks, and the
        # unsharded reference's gradient.
        g = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(10 + rank))
        y.backward(g)
        gathered = [torch.empty_like(g) for _ in range(size)]
        dist.all_gather(gathered, g)
        full_leaf = full.clone().requires_grad_(True)
        reference = sum((halo_reference(full_leaf, other, shard, left, right, periodic) * gathered[other]).sum()
                        for other in range(size))
        reference.backward()
        expected = full_leaf.grad[rank * shard:(rank + 1) * shard]
        # Each entry is a sum of at most (left + right) / shard + 2 terms: a few ulps of their magnitude.
        bound = 8 * torch.finfo(torch.float64).eps * (g.abs().max().item() + 1) * (left + right + shard)
        error = (x.grad - expected).abs().max().item()
        assert error <= bound, f"halo backward periodic={periodic}: off by {error} > {bound}"
        # In place, on an extended buffer, with each strategy the ucx backend has.
        for strategy in ("p2p", "neighbor_alltoallv", "rma"):
            extended = torch.full((left + shard + right, width), -1.0, dtype=torch.float64)
            extended[left:left + shard] = full[rank * shard:(rank + 1) * shard]
            mt.halo_exchange_(extended, None, left, right, periodic=periodic, strategy=strategy)
            expected = halo_reference(full, rank, shard, left, right, periodic)
            if not periodic and rank == 0:  # rows beyond the ends are left as they were
                expected[:left] = -1.0
            if not periodic and rank == size - 1:
                expected[left + shard:] = -1.0
            same(extended, expected, f"halo_exchange_ {strategy} periodic={periodic}")
        # Along another dimension too.
        x2 = full[rank * shard:(rank + 1) * shard].t().contiguous()
        y2 = mt.halo_exchange(x2, None, left, right, dim=1, periodic=periodic)
        same(y2, halo_reference(full, rank, shard, left, right, periodic).t(), f"halo dim=1 periodic={periodic}")
    # gradcheck in float64 over every rank, with a halo wider than a neighbour's shard.
    gloo = dist.new_group(backend="gloo")
    shard, left, right = 2, 3, 1
    whole = torch.randn(shard * size, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    for periodic in (False, True):
        def sharded(x, periodic=periodic):
            return mt.halo_exchange(x[rank * shard:(rank + 1) * shard], None, left, right, 0, periodic)
        assert distributed_gradcheck(sharded, (whole.clone().requires_grad_(True),), gloo), f"periodic={periodic}"


def layout_positions(layout, sequence, ranks, rank):
    """Global rows of `rank` in its local order: contiguous blocks, or zigzag chunks r and 2P-1-r."""
    if layout == "contiguous":
        block = sequence // ranks
        return list(range(rank * block, (rank + 1) * block))
    chunk = sequence // (2 * ranks)
    return list(range(rank * chunk, (rank + 1) * chunk)) + list(
        range((2 * ranks - 1 - rank) * chunk, (2 * ranks - rank) * chunk))


def reference_attention(q, k, v, causal):
    """[S, H, D] attention per head, in the precision of its inputs."""
    scores = torch.einsum("shd,thd->hst", q, k) / q.shape[-1] ** 0.5
    if causal:
        mask = torch.ones(q.shape[0], q.shape[0], dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.einsum("hst,thd->shd", torch.softmax(scores, dim=-1), v)


def case_ring(rank, size):
    sequence, heads, dim = 8 * size, 2, 8
    generator = torch.Generator().manual_seed(5)
    full = [torch.randn(sequence, heads, dim, dtype=torch.float64, generator=generator) for _ in range(3)]
    eps = torch.finfo(torch.float32).eps
    for layout in ("zigzag", "contiguous"):
        for causal in (True, False):
            rows = layout_positions(layout, sequence, size, rank)
            q, k, v = (t[rows].float().requires_grad_(True) for t in full)
            out = mt.ring_attention(q, k, v, None, causal=causal, layout=layout)
            g = torch.randn(out.shape, generator=torch.Generator().manual_seed(50 + rank))
            (out * g).sum().backward()
            # The unsharded float64 reference, and its gradients for the same per-rank weights.
            reference = [t.clone().requires_grad_(True) for t in full]
            expected = reference_attention(*reference, causal)
            weights = torch.zeros(sequence, heads, dim, dtype=torch.float64)
            everyone = [torch.empty_like(g) for _ in range(size)]
            dist.all_gather(everyone, g)
            for other in range(size):
                weights[layout_positions(layout, sequence, size, other)] = everyone[other].double()
            (expected * weights).sum().backward()
            # float32 rounding of scores (dim terms), softmax and the weighted sum (sequence terms).
            scale = max(t.abs().max().item() for t in full)
            bound = 16 * eps * (dim * scale * scale + sequence) * scale
            error = (out.double() - expected[rows]).abs().max().item()
            assert error <= bound, f"ring_attention {layout} causal={causal}: forward off by {error} > {bound}"
            gradient_bound = bound * (g.abs().max().item() + 1)
            for name, mine, theirs in (("q", q, reference[0]), ("k", k, reference[1]), ("v", v, reference[2])):
                error = (mine.grad.double() - theirs.grad[rows]).abs().max().item()
                assert error <= gradient_bound, f"ring_attention {layout} causal={causal}: d{name} off by {error}"
    # gradcheck in float64 over every rank: dQ, dK and dV, with dK and dV back around the ring.
    gloo = dist.new_group(backend="gloo")
    sequence, heads, dim = 2 * size, 1, 2
    generator = torch.Generator().manual_seed(9)
    whole = [torch.randn(sequence, heads, dim, dtype=torch.float64, generator=generator) for _ in range(3)]
    for layout in ("zigzag", "contiguous"):
        for causal in (True, False):
            rows = layout_positions(layout, sequence, size, rank)

            def sharded(q, k, v, layout=layout, causal=causal, rows=rows):
                return mt.ring_attention(q[rows], k[rows], v[rows], None, causal=causal, layout=layout)
            inputs = tuple(t.clone().requires_grad_(True) for t in whole)
            assert distributed_gradcheck(sharded, inputs, gloo), f"ring_attention {layout} causal={causal}"


def case_timeout(rank, size):
    data = torch.ones(16)
    if rank == 1:
        time.sleep(6)  # never calls
        print(f"rank {rank}: timeout ok (stayed away)")
        return
    start = time.monotonic()
    try:
        dist.all_reduce(data)
    except (RuntimeError, TimeoutError) as error:
        elapsed = time.monotonic() - start
        message = str(error)
        assert "timeout" in message and "1" in message, message
        print(f"rank {rank}: all_reduce failed after {elapsed:.1f} s: {message}")
    else:
        raise AssertionError("all_reduce completed without rank 1")


def case_ddp(rank, size):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2)).double()
    reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2)).double()
    reference.load_state_dict(model.state_dict())
    gloo = dist.new_group(backend="gloo")
    ours = torch.nn.parallel.DistributedDataParallel(model)
    theirs = torch.nn.parallel.DistributedDataParallel(reference, process_group=gloo)
    optimisers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (ours, theirs)]
    data = torch.Generator().manual_seed(100 + rank)
    for step in range(5):
        inputs = torch.randn(4, 8, dtype=torch.float64, generator=data)
        for net, optimiser in zip((ours, theirs), optimisers):
            optimiser.zero_grad()
            net(inputs).pow(2).sum().backward()
            optimiser.step()
    for mine, gloos in zip(ours.parameters(), theirs.parameters()):
        # Sums of `size` gradients in another order: a few ulps of the largest parameter.
        bound = 64 * torch.finfo(torch.float64).eps * max(1.0, gloos.abs().max().item()) * size
        error = (mine - gloos).abs().max().item()
        assert error <= bound, f"DDP over meshcomm differs from gloo by {error} > {bound}"


def main():
    cases = sys.argv[1].split(",")
    dist.init_process_group(mt.BACKEND, init_method="env://", timeout=TIMEOUT)
    rank, size = dist.get_rank(), dist.get_world_size()
    for case in cases:
        globals()[f"case_{case}"](rank, size)
        if case != "timeout":
            dist.barrier()
            print(f"rank {rank}: {case} ok", flush=True)
    os._exit(0)  # a rank of the timeout case must not wait for the others in teardown


if __name__ == "__main__":
    main()
