"""meshcomm inside PyTorch.

Importing this module registers the torch.distributed backend ``"meshcomm"``::

    import torch.distributed as dist
    import meshcomm.torch

    dist.init_process_group("meshcomm")            # under torchrun, or any env:// / file:// init
    groups = meshcomm.torch.init_mesh("1,-1,2,1")   # per-axis and flattened groups
    y = meshcomm.torch.halo_exchange(x, groups["sp"], left=window - 1, right=0)

Each process group owns a meshcomm communicator (ucx backend) made through the store torch hands
it; every wait is bounded by the group's timeout, and errors carry meshcomm's message.
"""

import os
import socket

import torch
import torch.distributed as dist

from . import _C

__all__ = ["init_mesh", "halo_exchange", "halo_exchange_", "ring_attention", "group_name", "BACKEND"]

BACKEND = "meshcomm"
_names = {}


def _create_group(store, rank, size, timeout):
    group = _C.ProcessGroupMeshcomm(store, rank, size, timeout)
    name = f"meshcomm:{len(_names)}"
    _names[group] = name
    _C.register_group(name, group)
    return group


def _environment_from_mpirun():
    """Under mpirun (or srun with PMIx) without torchrun, the env:// variables from the launcher:
    rank and size from Open MPI's (or Slurm's), and rank 0's host and a free port of its, agreed
    through the launcher's PMIx server."""
    if "RANK" in os.environ or ("OMPI_COMM_WORLD_RANK" not in os.environ and "SLURM_PROCID" not in os.environ):
        return
    ompi = "OMPI_COMM_WORLD_RANK" in os.environ
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK" if ompi else "SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE" if ompi else "SLURM_NTASKS"]
    os.environ.setdefault("LOCAL_RANK", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK" if ompi else "SLURM_LOCALID", "0"))
    if ompi and "OMPI_COMM_WORLD_LOCAL_SIZE" in os.environ:
        os.environ.setdefault("LOCAL_WORLD_SIZE", os.environ["OMPI_COMM_WORLD_LOCAL_SIZE"])
    if "MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ:
        with socket.socket() as probe:
            probe.bind(("", 0))
            port = probe.getsockname()[1]
        host, port = _C.rank0_address(f"{socket.gethostname()}:{port}").rsplit(":", 1)
        os.environ.setdefault("MASTER_ADDR", host)
        os.environ.setdefault("MASTER_PORT", port)


_environment_from_mpirun()

# Registering twice asserts in torch: a reload of this module must not try.
if not hasattr(dist.Backend, BACKEND.upper()):
    dist.Backend.register_backend(BACKEND, _create_group)


def _group_object(group):
    return dist.distributed_c10d._get_default_group() if group is None else group


def group_name(group=None):
    """The name the ops use for ``group`` (default: the world), a process group made with backend "meshcomm"."""
    if isinstance(group, str):
        return group
    group = _group_object(group)
    if group not in _names:
        raise ValueError(f"{group} is not a process group of the meshcomm backend; make it with backend=\"meshcomm\"")
    return _names[group]


def halo_exchange(x, group=None, left=0, right=0, dim=0, periodic=False):
    """This rank's shard ``x`` of a sequence sharded along ``dim`` over ``group``, returned with ``left``
    rows of the previous shards before it and ``right`` rows of the next after it (zeros beyond the ends
    unless ``periodic``). Differentiable: the backward adds the halo rows' gradients into their owners."""
    return torch.ops.meshcomm.halo_exchange(x, group_name(group), left, right, dim, periodic)


def halo_exchange_(extended, group=None, left=0, right=0, periodic=False, strategy="p2p"):
    """In place: ``extended`` (contiguous, sequence along dim 0) holds ``left`` halo rows, this rank's
    shard, then ``right`` halo rows; fills the halo rows from their owners without copying the
    shard. Not differentiable. ``strategy``: "p2p", "neighbor_alltoallv" or "rma"."""
    return torch.ops.meshcomm.halo_exchange_(extended, group_name(group), left, right, 0, periodic, strategy)


def ring_attention(q, k, v, group=None, causal=True, layout="zigzag"):
    """RingAttention over ``group``: ``q``, ``k``, ``v`` are this rank's rows, float32 or float64
    [rows, heads, head_dim], in ``layout``'s order ("zigzag": rank r holds chunks r and 2P-1-r of 2P, which
    balances causal work; "contiguous"). Returns the attention output for this rank's queries.
    Differentiable: the backward sends each block's key and value gradients around the ring home."""
    out, _ = torch.ops.meshcomm.ring_attention(q, k, v, group_name(group), causal, layout)
    return out


def init_mesh(dims, placement="topology_aware", ranks_per_node=None, axes=None):
    """The process groups of a device mesh over the default group, as the C++ ``Mesh`` places it.

    ``dims`` takes the forms of ``MeshSpec::parse`` ("1,-1,2,1" for dp, fsdp, tp, sp, or
    "dp:2,fsdp:-1,tp:4"). ``ranks_per_node`` defaults to ``LOCAL_WORLD_SIZE`` (torchrun), else the
    world. ``axes`` lists the axis sets to make groups for (each a name or "dp,fsdp"; default: every
    single axis). Every rank must call it alike: each group is a ``dist.new_group``. Returns a dict
    from axis set to this rank's group."""
    world = dist.get_world_size()
    rank = dist.get_rank()
    if ranks_per_node is None:
        ranks_per_node = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    if axes is None:
        axes = _C.mesh_axes(dims, world)
    mine = {}
    for axis_set in axes:
        for ranks in _C.mesh_groups(dims, world, placement, ranks_per_node, axis_set):
            group = dist.new_group(ranks, backend=BACKEND)
            if rank in ranks:
                mine[axis_set] = group
    return mine
