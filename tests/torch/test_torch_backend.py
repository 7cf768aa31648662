"""The torch.distributed backend "meshcomm" on Debian's torch: 2 or 4 processes of torch_worker.py,
started the way torchrun does, run the cases one after another in one process group (each process
imports torch once: about 2 s of a core apiece), and each test requires every rank to have finished
its case."""

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


CASES = ["collectives", "halo", "ring", "ddp"]
# What each launch runs, in order: the mesh's groups need 4 ranks (2 per node).
LAUNCHES = {2: CASES, 4: CASES + ["mesh"]}


@pytest.fixture(scope="module")
def launched():
    """The outputs of the launch of each size, made the first time a test asks for it."""
    done = {}

    def outputs_of(size):
        if size not in done:
            done[size] = launch(",".join(LAUNCHES[size]), size)
        return done[size]

    return outputs_of


def assert_every_rank_finished(case, outputs, report):
    for rank, (_, output) in enumerate(outputs):
        assert f"rank {rank}: {case} ok" in output, report


@pytest.mark.parametrize("size", [2, 4])
@pytest.mark.parametrize("case", CASES)
def test_case(case, size, launched):
    assert_every_rank_finished(case, *launched(size))


def test_mesh_groups_match_the_cpp_mesh(launched):
    assert_every_rank_finished("mesh", *launched(4))


@pytest.mark.parametrize("size", [2, 4])
def test_every_rank_exits_cleanly(size, launched):
    outputs, report = launched(size)
    assert all(code == 0 for code, _ in outputs), report


def test_a_peer_that_never_calls_is_named_in_the_timeout():
    outputs, report = launch("timeout", 2, extra={"WORKER_TIMEOUT": "3"})
    assert all(code == 0 for code, _ in outputs), report
    assert "all_reduce failed after" in outputs[0][1], report
