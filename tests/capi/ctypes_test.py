"""One rank of a two-process test of meshcomm's C ABI through Python's ctypes.

Started by launch_env.sh with torchrun's variables; the library comes from the path given. Each
rank checks an all-gather and a halo exchange (forward and adjoint) exactly, and that a wrong
call returns its code with a message, then prints "rank R: ctypes ok".

    launch_env.sh 2 /usr/bin/python3 ctypes_test.py build/src/libmeshcomm.so
"""

import ctypes
import sys

SUCCESS, INVALID_ARGUMENT = 0, 1
FLOAT64, INT32 = 1, 6
CONFIG_MAGIC = 0x6D657368


class HaloSpec(ctypes.Structure):
    """meshcommHaloSpec_t, field for field."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("magic", ctypes.c_uint),
        ("version", ctypes.c_uint),
        ("shard_rows", ctypes.POINTER(ctypes.c_size_t)),
        ("left", ctypes.c_int64),
        ("right", ctypes.c_int64),
        ("row_elements", ctypes.c_size_t),
        ("type", ctypes.c_int),
        ("row_stride", ctypes.c_size_t),
        ("periodic", ctypes.c_int),
        ("strategy", ctypes.c_int),
        ("memory", ctypes.c_int),
    ]


class CommConfig(ctypes.Structure):
    """meshcommCommConfig_t."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("magic", ctypes.c_uint),
        ("version", ctypes.c_uint),
        ("backend", ctypes.c_int),
        ("timeout_ms", ctypes.c_int64),
    ]


def load(path):
    lib = ctypes.CDLL(path)
    handle = ctypes.c_void_p
    lib.meshcommGetErrorString.restype = ctypes.c_char_p
    lib.meshcommGetLastError.restype = ctypes.c_char_p
    lib.meshcommGetLastError.argtypes = [handle]
    lib.meshcommBootstrapFromEnvironment.argtypes = [ctypes.c_int64, ctypes.POINTER(handle)]
    lib.meshcommCommCreate.argtypes = [handle, ctypes.c_void_p, ctypes.POINTER(handle)]
    lib.meshcommCommRank.argtypes = [handle, ctypes.POINTER(ctypes.c_int)]
    lib.meshcommCommSize.argtypes = [handle, ctypes.POINTER(ctypes.c_int)]
    lib.meshcommAllGather.argtypes = [handle, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                      ctypes.c_void_p, ctypes.POINTER(handle)]
    lib.meshcommCommSplit.argtypes = [handle, ctypes.c_int, ctypes.c_int, ctypes.POINTER(handle)]
    lib.meshcommIsend.argtypes = [handle, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_void_p, ctypes.POINTER(handle)]
    lib.meshcommIrecv.argtypes = lib.meshcommIsend.argtypes
    lib.meshcommWorkTest.argtypes = [handle, ctypes.POINTER(ctypes.c_int)]
    lib.meshcommWorkWait.argtypes = [handle, ctypes.c_int64]
    lib.meshcommWorkFree.argtypes = [handle]
    lib.meshcommHaloPlanCreate.argtypes = [handle, ctypes.POINTER(HaloSpec), ctypes.POINTER(handle)]
    lib.meshcommHaloPlanRows.argtypes = [handle, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    lib.meshcommHaloStart.argtypes = [handle, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(handle)]
    lib.meshcommHaloStartAdjoint.argtypes = [handle, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(handle)]
    lib.meshcommHaloPlanDestroy.argtypes = [handle]
    lib.meshcommCommDestroy.argtypes = [handle]
    lib.meshcommBootstrapDestroy.argtypes = [handle]
    return lib


class Checker:
    """Calls into the library and fails the rank, with the library's message, on any error."""

    def __init__(self, lib):
        self.lib = lib
        self.comm = None

    def __call__(self, name, *args):
        result = getattr(self.lib, name)(*args)
        if result != SUCCESS:
            message = self.lib.meshcommGetLastError(self.comm).decode()
            raise SystemExit(f"{name} failed with {result}: {message}")

    def wait(self, work):
        self("meshcommWorkWait", work, 0)
        self("meshcommWorkFree", work)


def main():
    lib = load(sys.argv[1])
    check = Checker(lib)
    bootstrap, comm, work = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    check("meshcommBootstrapFromEnvironment", 0, ctypes.byref(bootstrap))

    # An uninitialised config is refused with a message that says how to fill it.
    garbage = CommConfig()
    result = lib.meshcommCommCreate(bootstrap, ctypes.byref(garbage), ctypes.byref(comm))
    message = lib.meshcommGetLastError(None).decode()
    assert result == INVALID_ARGUMENT and "MESHCOMM_COMM_CONFIG_INITIALIZER" in message, (result, message)

    config = CommConfig(ctypes.sizeof(CommConfig), CONFIG_MAGIC, 0, 0, 60000)
    check("meshcommCommCreate", bootstrap, ctypes.byref(config), ctypes.byref(comm))
    check.comm = comm
    rank, size = ctypes.c_int(), ctypes.c_int()
    check("meshcommCommRank", comm, ctypes.byref(rank))
    check("meshcommCommSize", comm, ctypes.byref(size))
    rank, size = rank.value, size.value

    # All-gather of three doubles per rank.
    mine = (ctypes.c_double * 3)(*(rank * 10.0 + k for k in range(3)))
    gathered = (ctypes.c_double * (3 * size))()
    check("meshcommAllGather", comm, mine, gathered, 3, FLOAT64, None, ctypes.byref(work))
    check.wait(work)
    assert list(gathered) == [r * 10.0 + k for r in range(size) for k in range(3)], list(gathered)

    # A ring of messages: each rank sends to the next and receives from the previous.
    send = (ctypes.c_int32 * 4)(*(rank * 4 + k for k in range(4)))
    received = (ctypes.c_int32 * 4)()
    receive_work, send_work = ctypes.c_void_p(), ctypes.c_void_p()
    check("meshcommIrecv", comm, received, 4, INT32, (rank - 1) % size, 7, None, ctypes.byref(receive_work))
    check("meshcommIsend", comm, send, 4, INT32, (rank + 1) % size, 7, None, ctypes.byref(send_work))
    done = ctypes.c_int(0)
    check("meshcommWorkTest", receive_work, ctypes.byref(done))
    check.wait(receive_work)
    check.wait(send_work)
    previous = (rank - 1) % size
    assert list(received) == [previous * 4 + k for k in range(4)], list(received)

    # A split by rank parity: on two ranks, a communicator of one each.
    half = ctypes.c_void_p()
    check("meshcommCommSplit", comm, rank % 2, rank, ctypes.byref(half))
    half_size = ctypes.c_int()
    check("meshcommCommSize", half, ctypes.byref(half_size))
    assert half_size.value == (size - rank % 2 + 1) // 2, half_size.value
    check("meshcommCommDestroy", half)

    # A wrong element type is refused, naming it; the communicator stays usable.
    result = lib.meshcommAllGather(comm, mine, gathered, 3, 42, None, ctypes.byref(work))
    message = lib.meshcommGetLastError(comm).decode()
    assert result == INVALID_ARGUMENT and "type = 42" in message, (result, message)

    # Halo: 5 rows of 2 int32 per rank, 2 halo rows on each side, periodic.
    shard, halo, width = 5, 2, 2
    shard_rows = (ctypes.c_size_t * size)(*([shard] * size))
    spec = HaloSpec(ctypes.sizeof(HaloSpec), CONFIG_MAGIC, 0, shard_rows, halo, halo, width, INT32, 0, 1, 0, 0)
    plan = ctypes.c_void_p()
    check("meshcommHaloPlanCreate", comm, ctypes.byref(spec), ctypes.byref(plan))
    rows, first = ctypes.c_size_t(), ctypes.c_size_t()
    check("meshcommHaloPlanRows", plan, ctypes.byref(rows), ctypes.byref(first))
    rows, first = rows.value, first.value
    assert (rows, first) == (shard + 2 * halo, halo), (rows, first)
    total = shard * size

    def global_row(row):
        return (rank * shard + row - first) % total

    extended = (ctypes.c_int32 * (rows * width))()
    for row in range(rows):
        for e in range(width):
            extended[row * width + e] = global_row(row) * 100 + e if first <= row < first + shard else -1
    check("meshcommHaloStart", plan, extended, None, ctypes.byref(work))
    check.wait(work)
    expected = [global_row(row) * 100 + e for row in range(rows) for e in range(width)]
    assert list(extended) == expected, (list(extended), expected)

    # Adjoint: every halo row carries 1 back to its owner row; the own rows start at 0.
    gradient = (ctypes.c_int32 * (rows * width))()
    for row in list(range(first)) + list(range(first + shard, rows)):
        for e in range(width):
            gradient[row * width + e] = 1
    check("meshcommHaloStartAdjoint", plan, gradient, None, ctypes.byref(work))
    check.wait(work)
    sent = [0] * total
    for other in range(size):
        for row in list(range(first)) + list(range(first + shard, rows)):
            sent[(other * shard + row - first) % total] += 1
    for row in range(first, first + shard):
        assert all(gradient[row * width + e] == sent[global_row(row)] for e in range(width)), row

    check("meshcommHaloPlanDestroy", plan)
    check("meshcommCommDestroy", comm)
    check.comm = None
    check("meshcommBootstrapDestroy", bootstrap)
    print(f"rank {rank}: ctypes ok: isend/irecv, split, all_gather and halo (forward, adjoint) exact on {size} ranks")


if __name__ == "__main__":
    main()
