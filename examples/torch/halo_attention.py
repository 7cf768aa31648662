"""Sliding-window attention over a sequence sharded with meshcomm, inside an ordinary PyTorch
training loop: a mesh from meshcomm.torch.init_mesh, a halo exchange over its sequence axis that
brings each rank the keys and values its queries need (differentiable: the backward sends the
halo gradients home), and DistributedDataParallel over the mesh's data axis, both on the
"meshcomm" backend.

    torchrun --standalone --nproc_per_node 4 --redirects 1 --tee 1 examples/torch/halo_attention.py --mesh 2,2
    mpirun -np 4 python3 examples/torch/halo_attention.py --mesh 2,2

Every step's loss is checked against one process computing the same steps unsharded.
"""

import argparse

import torch
import torch.distributed as dist

import meshcomm.torch as mt


def attention(q, k, v, window, offset):
    """Causal sliding-window attention of queries q (sequence rows offset..) over keys k and
    values v that begin `window - 1` rows earlier (zeros before the sequence, masked)."""
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    rows = torch.arange(q.shape[0]).unsqueeze(1) + offset
    cols = torch.arange(k.shape[0]).unsqueeze(0) + offset - (window - 1)
    allowed = (cols <= rows) & (cols > rows - window) & (cols >= 0)
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


class Layer(torch.nn.Module):
    """One attention layer and an MLP, residual, on [sequence, width] rows."""

    def __init__(self, width):
        super().__init__()
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width))

    def forward(self, x, window, offset, exchange):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k, v = exchange(k), exchange(v)
        x = x + attention(q, k, v, window, offset)
        return x + self.mlp(x)


def batches(args, dp_rank):
    """The same stream of [sequence, width] batches for every rank of a data-parallel replica."""
    data = torch.Generator().manual_seed(1000 + dp_rank)
    target = torch.Generator().manual_seed(2000 + dp_rank)
    for _ in range(args.steps):
        yield (torch.randn(args.seq, args.width, dtype=torch.float64, generator=data),
               torch.randn(args.seq, args.width, dtype=torch.float64, generator=target))


def train_sharded(args, groups):
    """Losses of every step, summed over the data-parallel replicas, on the mesh."""
    dp, sp = groups["dp"], groups["sp"]
    sp_rank, sp_size = dist.get_rank(sp), dist.get_world_size(sp)
    dp_rank = dist.get_rank(dp)
    shard = args.seq // sp_size
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(Layer(args.width).double(), process_group=dp)
    optimiser = torch.optim.SGD(model.parameters(), lr=args.lr)
    window = args.window

    def exchange(t):
        return mt.halo_exchange(t, sp, left=window - 1)

    losses = []
    for inputs, targets in batches(args, dp_rank):
        rows = slice(sp_rank * shard, (sp_rank + 1) * shard)
        out = model(inputs[rows], window, sp_rank * shard, exchange)
        loss = (out - targets[rows]).pow(2).sum() / args.seq
        optimiser.zero_grad()
        loss.backward()
        # DDP averaged over dp; the sequence's gradient is the sum of its shards'.
        for parameter in model.parameters():
            dist.all_reduce(parameter.grad, group=sp)
        optimiser.step()
        total = loss.detach().clone()
        dist.all_reduce(total, group=sp)
        dist.all_reduce(total, group=dp)
        losses.append(total.item())
    return losses


def train_unsharded(args, dp_size):
    """The same steps in one process: every replica's batch on the whole sequence, gradients averaged."""
    torch.manual_seed(0)
    model = Layer(args.width).double()
    optimiser = torch.optim.SGD(model.parameters(), lr=args.lr)
    streams = [batches(args, replica) for replica in range(dp_size)]
    pad = torch.zeros(args.window - 1, args.width, dtype=torch.float64)

    def exchange(t):
        return torch.cat([pad, t])

    losses = []
    for step_batches in zip(*streams):
        optimiser.zero_grad()
        total = 0.0
        for inputs, targets in step_batches:
            loss = (model(inputs, args.window, 0, exchange) - targets).pow(2).sum() / args.seq
            (loss / dp_size).backward()
            total += loss.item()
        optimiser.step()
        losses.append(total)
    return losses


def arguments(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="1,-1", help="dp,sp sizes (one may be -1)")
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.01)
    return parser.parse_args(argv)


def main():
    args = arguments()
    dist.init_process_group("meshcomm")
    dp_size, sp_size = args.mesh.split(",")
    groups = mt.init_mesh(f"dp:{dp_size},sp:{sp_size}", axes=["dp", "sp"])
    sharded = train_sharded(args, groups)
    reference = train_unsharded(args, dist.get_world_size(groups["dp"]))
    worst = max(abs(a - b) / abs(b) for a, b in zip(sharded, reference))
    if dist.get_rank() == 0:
        for step, (a, b) in enumerate(zip(sharded, reference)):
            print(f"step {step:2d}: loss {a:.10f}  unsharded {b:.10f}")
        verdict = "matches" if worst <= 1e-5 else "DIFFERS"
        print(f"losses over {args.steps} steps against one unsharded process: worst relative difference "
              f"{worst:.2e}: {verdict}")
    if worst > 1e-5:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
