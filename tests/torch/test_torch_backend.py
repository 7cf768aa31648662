"""The torch.distributed backend "meshcomm" on Debian's torch: each test starts 2 or 4 processes of
torch_worker.py the way torchrun does and requires every rank to finish its case."""

import os
import socket
import subprocess
import sys

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "torch_worker.py")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(case, size, extra=None, timeout=240):
    port = free_port()
    processes = []
    for rank in range(size):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(size), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), **(extra or {}))
        processes.append(subprocess.Popen([sys.executable, WORKER, case], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
    outputs = []
    for process in processes:
        output, _ = process.communicate(timeout=timeout)
        outputs.append((process.returncode, output))
    report = "\n".join(f"--- rank {rank} (exit {code})\n{output}" for rank, (code, output) in enumerate(outputs))
    print(report)
    return outputs, report


@pytest.mark.parametrize("size", [2, 4])
@pytest.mark.parametrize("case", ["collectives", "halo", "ring", "ddp"])
def test_case(case, size):
    outputs, report = launch(case, size)
    for rank, (code, output) in enumerate(outputs):
        assert code == 0 and f"rank {rank}: {case} ok" in output, report


def test_mesh_groups_match_the_cpp_mesh():
    outputs, report = launch("mesh", 4)
    for rank, (code, output) in enumerate(outputs):
        assert code == 0 and f"rank {rank}: mesh ok" in output, report


def test_a_peer_that_never_calls_is_named_in_the_timeout():
    outputs, report = launch("timeout", 2, extra={"WORKER_TIMEOUT": "3"})
    assert all(code == 0 for code, _ in outputs), report
    assert "all_reduce failed after" in outputs[0][1], report
