"""Sliding-window attention over a sequence sharded with meshcomm, inside an ordinary PyTorch
training loop: the sequence axis ("sp") of a mesh from meshcomm.torch.init_mesh, a halo exchange
that brings each rank the keys and values its queries need (differentiable: the backward sends
the halo gradients home), and the gradients summed over the sequence's shards.

    torchrun --standalone --nproc_per_node 4 --redirects 1 --tee 1 examples/torch/halo_attention.py
    mpirun -np 4 python3 examples/torch/halo_attention.py

Rank 0 checks the first step's loss against the unsharded computation of the same batch.
"""

import argparse

import torch
import torch.distributed as dist

import meshcomm.torch as mt


def attention(q, k, v, window, offset):
    """Causal sliding-window attention of queries q (rows offset.. of the sequence) over keys k
    and values v that begin `window - 1` rows earlier."""
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    rows = torch.arange(q.shape[0]).unsqueeze(1) + offset
    cols = torch.arange(k.shape[0]).unsqueeze(0) + offset - (window - 1)
    allowed = (cols <= rows) & (cols > rows - window) & (cols >= 0)
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="1,-1", help="dp,sp sizes (one may be -1)")
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    dist.init_process_group("meshcomm")
    groups = mt.init_mesh(f"dp:{args.mesh.split(',')[0]},sp:{args.mesh.split(',')[1]}", axes=["dp", "sp"])
    sp = groups["sp"]
    sp_rank, sp_size = dist.get_rank(sp), dist.get_world_size(sp)
    shard = args.seq // sp_size

    torch.manual_seed(0)
    projection = torch.nn.Linear(args.width, 3 * args.width).double()
    optimiser = torch.optim.SGD(projection.parameters(), lr=args.lr)
    data = torch.Generator().manual_seed(1)
    first_loss = None
    for step in range(args.steps):
        sequence = torch.randn(args.seq, args.width, dtype=torch.float64, generator=data)
        mine = sequence[sp_rank * shard:(sp_rank + 1) * shard]
        q, k, v = projection(mine).chunk(3, dim=-1)
        k_halo = mt.halo_exchange(k, sp, left=args.window - 1)
        v_halo = mt.halo_exchange(v, sp, left=args.window - 1)
        out = attention(q, k_halo, v_halo, args.window, sp_rank * shard)
        loss = out.pow(2).sum() / args.seq
        optimiser.zero_grad()
        loss.backward()
        for parameter in projection.parameters():  # the sequence's gradient is the sum of the shards'
            dist.all_reduce(parameter.grad, group=sp)
        optimiser.step()
        total = loss.detach().clone()
        dist.all_reduce(total, group=sp)
        first_loss = total.item() if first_loss is None else first_loss
        if dist.get_rank() == 0:
            print(f"step {step}: loss {total.item():.6f}")
    # The unsharded reference: the same first step on the whole sequence, on every rank.
    torch.manual_seed(0)
    reference = torch.nn.Linear(args.width, 3 * args.width).double()
    sequence = torch.randn(args.seq, args.width, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    q, k, v = reference(sequence).chunk(3, dim=-1)
    padded_k = torch.cat([torch.zeros(args.window - 1, args.width, dtype=torch.float64), k])
    padded_v = torch.cat([torch.zeros(args.window - 1, args.width, dtype=torch.float64), v])
    expected = attention(q, padded_k, padded_v, args.window, 0).pow(2).sum().item() / args.seq
    # The shards sum the same terms in another order: a few ulps of the loss.
    matches = abs(first_loss - expected) <= 1e-12 * abs(expected)
    if dist.get_rank() == 0:
        print(f"unsharded first-step loss {expected:.6f}: {'matches' if matches else 'DIFFERS'}")
    if not matches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
