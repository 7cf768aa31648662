/*
 * meshcomm.h: the C ABI of meshcomm (C11; usable from C++, ctypes, cffi, Rust, Julia, Fortran).
 *
 * Objects are opaque handles; every function returns a meshcommResult_t (meshcommSuccess = 0)
 * and writes its results through pointers. No C++ exception ever crosses this boundary. After a
 * failure, meshcommGetLastError(comm) holds the full message: what was given, what was expected,
 * which rank or peer.
 *
 * Configuration structs begin with `size`, `magic` and `version` and must be filled by their
 * initializer macro (MESHCOMM_COMM_CONFIG_INITIALIZER, ...): a struct that was not is refused
 * with meshcommInvalidArgument, and a program compiled against an older meshcomm.h keeps working
 * with a newer library (the fields it does not know take their defaults).
 *
 * Every function that takes a handle returns meshcommInvalidArgument for a NULL handle, a handle
 * of another kind or one already destroyed (where that can be told), and a NULL output pointer;
 * the errors listed with each function are those beyond these.
 *
 * Buffers are host memory unless a meshcommCallOptions_t says otherwise. Counts are in elements
 * of the given data type. Operations return a work handle: test or wait on it, then free it
 * (freeing does not cancel: the buffers must stay valid until the operation completes).
 */
#ifndef MESHCOMM_MESHCOMM_H
#define MESHCOMM_MESHCOMM_H

#include <stddef.h>
#include <stdint.h>

#include "meshcomm/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MESHCOMM_C_API __attribute__((visibility("default")))
#else
#define MESHCOMM_C_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Results, versions and errors
 * ------------------------------------------------------------------------------------------- */

/** Every function's result. The codes after success mirror meshcomm::ErrorCode (docs/errors.md). */
typedef enum {
  meshcommSuccess = 0,
  meshcommInvalidArgument = 1, /**< a wrong argument or config; nothing was started */
  meshcommTimeout = 2,         /**< a wait ran past its timeout */
  meshcommSizeMismatch = 3,    /**< two ranks disagreed about a message's size */
  meshcommPeerFailure = 4,     /**< a peer failed or vanished */
  meshcommUnsupported = 5,     /**< this backend or build cannot do it */
  meshcommBackendFailure = 6,  /**< the engine (MPI, UCX, NCCL, PMIx, ...) reported an error */
  meshcommAborted = 7,         /**< the communicator was aborted */
  meshcommInternalError = 8,   /**< a bug in meshcomm */
  meshcommNumResults = 9
} meshcommResult_t;

/** Element types (meshcomm::DataType). */
typedef enum {
  meshcommFloat32 = 0,
  meshcommFloat64 = 1,
  meshcommFloat16 = 2,
  meshcommBfloat16 = 3,
  meshcommInt8 = 4,
  meshcommUint8 = 5,
  meshcommInt32 = 6,
  meshcommUint32 = 7,
  meshcommInt64 = 8,
  meshcommUint64 = 9
} meshcommDataType_t;

/** Reductions (meshcomm::ReduceOp). */
typedef enum { meshcommSum = 0, meshcommProd = 1, meshcommMin = 2, meshcommMax = 3, meshcommAvg = 4 } meshcommRedOp_t;

/** Where a buffer lives. */
typedef enum { meshcommMemoryHost = 0, meshcommMemoryCuda = 1 } meshcommMemory_t;

/** The engine a communicator uses (meshcomm::BackendKind). */
typedef enum {
  meshcommBackendAutomatic = 0, /**< inproc for threads, mpi for an MPI bootstrap, else ucx */
  meshcommBackendInproc = 1,
  meshcommBackendMpi = 2,
  meshcommBackendUcx = 3,
  meshcommBackendNccl = 4
} meshcommBackend_t;

/**
 * Writes MESHCOMM_VERSION_CODE of the library actually loaded (which may differ from the header's).
 * Errors: meshcommInvalidArgument if `version` is NULL.
 */
MESHCOMM_C_API meshcommResult_t meshcommGetVersion(int* version);

/** A short, static description of `result` ("invalid argument", ...); never NULL. */
MESHCOMM_C_API const char* meshcommGetErrorString(meshcommResult_t result);

/** A communicator (opaque). */
typedef struct meshcommComm* meshcommComm_t;

/**
 * The full message of the last failed call on `comm` (or on an object made from it: a work, a
 * halo plan, a ring, a mesh), or of this thread's last failed call that had no valid
 * communicator (creating one, a bad handle) when `comm` is NULL or not a communicator. Valid
 * until the next failure on the same communicator or thread; "" when there was none. Never NULL.
 */
MESHCOMM_C_API const char* meshcommGetLastError(meshcommComm_t comm);

/* ---------------------------------------------------------------------------------------------
 * Configuration structs
 * ------------------------------------------------------------------------------------------- */

/** The magic every initializer macro writes; anything else is an uninitialised config. */
#define MESHCOMM_CONFIG_MAGIC 0x6d657368u

/** How a communicator is created. Fill with MESHCOMM_COMM_CONFIG_INITIALIZER. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  meshcommBackend_t backend; /**< default meshcommBackendAutomatic */
  int64_t timeout_ms;        /**< default for every wait; 0: MESHCOMM_TIMEOUT, else 300 s */
} meshcommCommConfig_t;
#define MESHCOMM_COMM_CONFIG_INITIALIZER \
  { sizeof(meshcommCommConfig_t), MESHCOMM_CONFIG_MAGIC, MESHCOMM_VERSION_CODE, meshcommBackendAutomatic, 0 }

/** Per-call options of the collectives and point-to-point calls; NULL means the defaults. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  meshcommMemory_t memory; /**< where the buffers live; default host */
  void* stream;            /**< cudaStream_t ordering CUDA memory; NULL: the default stream */
  const char* algorithm;   /**< "ring", "native", ...; NULL or "": the selection table */
} meshcommCallOptions_t;
#define MESHCOMM_CALL_OPTIONS_INITIALIZER \
  { sizeof(meshcommCallOptions_t), MESHCOMM_CONFIG_MAGIC, MESHCOMM_VERSION_CODE, meshcommMemoryHost, NULL, NULL }

/* ---------------------------------------------------------------------------------------------
 * Bootstraps: how the processes of a job first meet
 * ------------------------------------------------------------------------------------------- */

/** How the processes of a job meet (opaque). */
typedef struct meshcommBootstrap* meshcommBootstrap_t;

/**
 * A caller's own exchange (as UCC's ucc_oob_coll_t), for a framework with a store of its own.
 * meshcomm starts an all-gather (or barrier), then polls `test` until it completes or the
 * timeout passes, and always calls `release` on the request. Fill with MESHCOMM_OOB_INITIALIZER.
 */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  void* context; /**< passed to every function */
  int rank;      /**< this rank, in [0, nranks) */
  int nranks;    /**< number of ranks */
  /** Starts gathering `bytes` from `send` of every rank into `recv` (rank order); sets *request; returns 0 or a negative error. */
  int (*allgather)(void* context, const void* send, void* recv, size_t bytes, void** request);
  /** Optional (NULL: an all-gather of one byte): starts a barrier; sets *request; returns 0 or a negative error. */
  int (*barrier)(void* context, void** request);
  /** 1 once `request` is complete, 0 while in progress, negative if it failed. */
  int (*test)(void* context, void* request);
  /** Releases `request` (complete, failed, or abandoned at a timeout). */
  void (*release)(void* context, void* request);
  /** Optional: writes up to `capacity` ranks that have not joined `request`; returns how many. */
  int (*missing)(void* context, void* request, int* ranks, int capacity);
  int64_t timeout_ms; /**< bound of each exchange; 0: MESHCOMM_TIMEOUT, else 300 s */
} meshcommOob_t;
#define MESHCOMM_OOB_INITIALIZER \
  { sizeof(meshcommOob_t), MESHCOMM_CONFIG_MAGIC, MESHCOMM_VERSION_CODE, NULL, -1, 0, NULL, NULL, NULL, NULL, NULL, 0 }

/**
 * The bootstrap the launcher calls for (meshcomm::Bootstrap::from_environment): torchrun's RANK,
 * WORLD_SIZE, MASTER_ADDR, MASTER_PORT (rank 0 listens on MASTER_PORT + 1, or on
 * MESHCOMM_BOOTSTRAP_PORT), else the PMIx server of srun --mpi=pmix, prterun or mpirun;
 * MESHCOMM_BOOTSTRAP=env|pmix forces one. `timeout_ms` bounds each exchange (0: MESHCOMM_TIMEOUT,
 * else 300 s). Errors: meshcommInvalidArgument (no launcher's variables, or one out of range:
 * the message names it), meshcommBackendFailure (no PMIx server, a port that cannot be bound),
 * meshcommUnsupported (built without PMIx).
 */
MESHCOMM_C_API meshcommResult_t meshcommBootstrapFromEnvironment(int64_t timeout_ms, meshcommBootstrap_t* bootstrap);

/**
 * A bootstrap over the caller's exchange `oob` (copied; `context` must stay valid while the
 * bootstrap and communicators created from it are being created). Errors:
 * meshcommInvalidArgument (uninitialised struct, a missing function, rank out of range).
 */
MESHCOMM_C_API meshcommResult_t meshcommBootstrapFromOob(const meshcommOob_t* oob, meshcommBootstrap_t* bootstrap);

/**
 * This rank, the number of ranks, and which bootstrap it is ("env", "pmix", "caller"; the
 * string lives as long as the bootstrap). Any output pointer may be NULL.
 * Errors: meshcommInvalidArgument for a bad handle.
 */
MESHCOMM_C_API meshcommResult_t meshcommBootstrapInfo(meshcommBootstrap_t bootstrap, int* rank, int* nranks,
                                                      const char** name);

/** Destroys a bootstrap (communicators created from it stay valid). NULL is a no-op. */
MESHCOMM_C_API meshcommResult_t meshcommBootstrapDestroy(meshcommBootstrap_t bootstrap);

/* ---------------------------------------------------------------------------------------------
 * Communicators
 * ------------------------------------------------------------------------------------------- */

/**
 * Collective over the bootstrap's ranks: creates the job's root communicator. `config` may be
 * NULL (defaults). Errors: meshcommInvalidArgument (bad handle, uninitialised config),
 * meshcommUnsupported (a backend not in this build), meshcommTimeout (ranks that never arrived,
 * named in the message), meshcommBackendFailure.
 */
MESHCOMM_C_API meshcommResult_t meshcommCommCreate(meshcommBootstrap_t bootstrap, const meshcommCommConfig_t* config,
                                                   meshcommComm_t* comm);

/**
 * Collective: ranks passing the same `color` >= 0 form a new communicator, ordered by `key`.
 * Errors: meshcommInvalidArgument (negative color, bad handle), meshcommTimeout.
 */
MESHCOMM_C_API meshcommResult_t meshcommCommSplit(meshcommComm_t comm, int color, int key, meshcommComm_t* newcomm);

/** This rank and the number of ranks. Errors: meshcommInvalidArgument (bad handle, NULL output). */
MESHCOMM_C_API meshcommResult_t meshcommCommRank(meshcommComm_t comm, int* rank);
MESHCOMM_C_API meshcommResult_t meshcommCommSize(meshcommComm_t comm, int* nranks);

/** The backend's name ("mpi", "ucx", ...; static). Errors: meshcommInvalidArgument (bad handle). */
MESHCOMM_C_API meshcommResult_t meshcommCommBackend(meshcommComm_t comm, const char** name);

/**
 * Aborts `comm`: local, returns at once, safe from any thread. Pending works fail with
 * meshcommAborted; later calls fail fast. Errors: meshcommInvalidArgument (bad handle).
 */
MESHCOMM_C_API meshcommResult_t meshcommCommAbort(meshcommComm_t comm);

/**
 * Destroys a communicator: local, never communicates. Memory from meshcommMemAlloc on it is
 * freed. A communicator owned by a mesh (meshcommMeshComm) is refused with
 * meshcommInvalidArgument. NULL is a no-op.
 */
MESHCOMM_C_API meshcommResult_t meshcommCommDestroy(meshcommComm_t comm);

/* ---------------------------------------------------------------------------------------------
 * Work handles
 * ------------------------------------------------------------------------------------------- */

/** One started operation (opaque). */
typedef struct meshcommWork* meshcommWork_t;

/**
 * Sets *done to 1 once the operation is complete, else 0; never blocks. Errors: the operation's
 * own (its message on the communicator), meshcommInvalidArgument (bad handle).
 */
MESHCOMM_C_API meshcommResult_t meshcommWorkTest(meshcommWork_t work, int* done);

/**
 * Blocks until the operation is complete or `timeout_ms` passes (0: the communicator's default).
 * Errors: meshcommTimeout (naming the operation and the peer not heard from; the operation stays
 * pending and may be waited on again), the operation's own, meshcommInvalidArgument (bad handle,
 * negative timeout).
 */
MESHCOMM_C_API meshcommResult_t meshcommWorkWait(meshcommWork_t work, int64_t timeout_ms);

/** Frees a work handle without cancelling the operation. NULL is a no-op. */
MESHCOMM_C_API meshcommResult_t meshcommWorkFree(meshcommWork_t work);

/* ---------------------------------------------------------------------------------------------
 * Point-to-point and collectives (every one starts the operation and returns its work)
 *
 * Errors of each: meshcommInvalidArgument (bad handle, NULL buffer with a nonzero count, peer or
 * root or tag out of range, uninitialised options, an unknown algorithm: the message lists the
 * valid ones), meshcommUnsupported, meshcommAborted; later, through the work: meshcommTimeout,
 * meshcommSizeMismatch (ranks passing different counts), meshcommPeerFailure.
 * ------------------------------------------------------------------------------------------- */

/** Sends `count` elements to `peer` with `tag` in [0, 2^20 - 1] at least. */
MESHCOMM_C_API meshcommResult_t meshcommIsend(meshcommComm_t comm, const void* data, size_t count,
                                              meshcommDataType_t type, int peer, int tag,
                                              const meshcommCallOptions_t* options, meshcommWork_t* work);

/** Receives exactly `count` elements from `peer` with `tag`. */
MESHCOMM_C_API meshcommResult_t meshcommIrecv(meshcommComm_t comm, void* data, size_t count, meshcommDataType_t type,
                                              int peer, int tag, const meshcommCallOptions_t* options,
                                              meshcommWork_t* work);

/** Completes once every rank has started it. */
MESHCOMM_C_API meshcommResult_t meshcommIbarrier(meshcommComm_t comm, meshcommWork_t* work);

/** Gathers `sendcount` elements of every rank into `recv` (nranks * sendcount) in rank order. */
MESHCOMM_C_API meshcommResult_t meshcommAllGather(meshcommComm_t comm, const void* send, void* recv, size_t sendcount,
                                                  meshcommDataType_t type, const meshcommCallOptions_t* options,
                                                  meshcommWork_t* work);

/** Reduces `send` (nranks * recvcount) over all ranks; block `rank` of the result lands in `recv`. */
MESHCOMM_C_API meshcommResult_t meshcommReduceScatter(meshcommComm_t comm, const void* send, void* recv,
                                                      size_t recvcount, meshcommDataType_t type, meshcommRedOp_t op,
                                                      const meshcommCallOptions_t* options, meshcommWork_t* work);

/** Reduces `count` elements over all ranks into `recv` (may equal `send`: in place, then on every
    rank of the call or on none, as meshcomm::Communicator::all_reduce says). */
MESHCOMM_C_API meshcommResult_t meshcommAllReduce(meshcommComm_t comm, const void* send, void* recv, size_t count,
                                                  meshcommDataType_t type, meshcommRedOp_t op,
                                                  const meshcommCallOptions_t* options, meshcommWork_t* work);

/** Block p (`count` elements) of `send` goes to rank p, which stores it as block `rank`. */
MESHCOMM_C_API meshcommResult_t meshcommAllToAll(meshcommComm_t comm, const void* send, void* recv, size_t count,
                                                 meshcommDataType_t type, const meshcommCallOptions_t* options,
                                                 meshcommWork_t* work);

/**
 * All-to-all with per-peer counts and offsets (elements; each array has nranks entries, and must
 * stay valid, like the buffers, until the work completes).
 */
MESHCOMM_C_API meshcommResult_t meshcommAllToAllv(meshcommComm_t comm, const void* send, const size_t* send_counts,
                                                  const size_t* send_offsets, void* recv, const size_t* recv_counts,
                                                  const size_t* recv_offsets, meshcommDataType_t type,
                                                  const meshcommCallOptions_t* options, meshcommWork_t* work);

/** Copies `count` elements of `data` from `root` to every rank. */
MESHCOMM_C_API meshcommResult_t meshcommBroadcast(meshcommComm_t comm, void* data, size_t count,
                                                  meshcommDataType_t type, int root,
                                                  const meshcommCallOptions_t* options, meshcommWork_t* work);

/* ---------------------------------------------------------------------------------------------
 * Shared memory
 * ------------------------------------------------------------------------------------------- */

/**
 * Allocates `bytes` of host memory that the other ranks on this node can read directly
 * (collectives on it copy each byte once). Local. Freed by meshcommMemFree or with `comm`.
 * Errors: meshcommInvalidArgument (bad handle, NULL ptr), meshcommBackendFailure.
 */
MESHCOMM_C_API meshcommResult_t meshcommMemAlloc(meshcommComm_t comm, size_t bytes, void** ptr);

/** Frees memory from meshcommMemAlloc on `comm`. Errors: meshcommInvalidArgument (not from it). */
MESHCOMM_C_API meshcommResult_t meshcommMemFree(meshcommComm_t comm, void* ptr);

/* ---------------------------------------------------------------------------------------------
 * Device meshes
 * ------------------------------------------------------------------------------------------- */

/** A device mesh and its axis communicators (opaque). */
typedef struct meshcommMesh* meshcommMesh_t;

/**
 * A mesh over `world` from dims such as "1,-1,2,2" (dp, fsdp, tp, sp) or "dp:2,fsdp:-1,tp:4";
 * `placement` NULL or "topology_aware", "easylm", "torchtitan", "accelerate", "megatron:...".
 * With `discover` nonzero the ranks' nodes are found out (collective); else all ranks are taken
 * to share one node. Errors: meshcommInvalidArgument (dims that cannot multiply to the world:
 * the message lists the sizes that would).
 */
MESHCOMM_C_API meshcommResult_t meshcommMeshCreate(meshcommComm_t world, const char* dims, const char* placement,
                                                   int discover, meshcommMesh_t* mesh);

/**
 * The communicator of this rank's group over `axes` ("tp", or "dp,fsdp" flattened, first
 * slowest); collective over the world the first time a set is asked for. The mesh owns it.
 * Errors: meshcommInvalidArgument (an unknown axis: the message lists the valid ones).
 */
MESHCOMM_C_API meshcommResult_t meshcommMeshComm(meshcommMesh_t mesh, const char* axes, meshcommComm_t* comm);

/** This rank's coordinate on `axis`. Errors: meshcommInvalidArgument (unknown axis). */
MESHCOMM_C_API meshcommResult_t meshcommMeshCoordinate(meshcommMesh_t mesh, const char* axis, int* coordinate);

/** Destroys a mesh and the communicators it owns. NULL is a no-op. */
MESHCOMM_C_API meshcommResult_t meshcommMeshDestroy(meshcommMesh_t mesh);

/* ---------------------------------------------------------------------------------------------
 * Halo exchange over a sharded sequence
 * ------------------------------------------------------------------------------------------- */

/** A halo exchange planned once, started many times (opaque). */
typedef struct meshcommHaloPlan* meshcommHaloPlan_t;

/** How a halo plan moves its rows (meshcomm::HaloStrategy). */
typedef enum {
  meshcommHaloP2p = 0,
  meshcommHaloNeighborAlltoallv = 1,
  meshcommHaloMpiNeighbor = 2,
  meshcommHaloRma = 3
} meshcommHaloStrategy_t;

/**
 * A 1-D sequence sharded over a communicator and the halo around each shard. Each rank's
 * buffer is extended: `left` halo rows, its own shard_rows[rank] rows, `right` halo rows; row i
 * starts at element i * row_stride. Fill with MESHCOMM_HALO_SPEC_INITIALIZER.
 */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  const size_t* shard_rows;  /**< rows of every rank's shard, nranks entries (copied) */
  int64_t left;              /**< halo rows before the shard (causal window W: W - 1) */
  int64_t right;             /**< halo rows after the shard */
  size_t row_elements;       /**< elements per row; default 1 */
  meshcommDataType_t type;   /**< default meshcommFloat32 */
  size_t row_stride;         /**< elements between rows; 0: row_elements */
  int periodic;              /**< nonzero: the sequence wraps around */
  meshcommHaloStrategy_t strategy;
  meshcommMemory_t memory;
} meshcommHaloSpec_t;
#define MESHCOMM_HALO_SPEC_INITIALIZER                                                                        \
  { sizeof(meshcommHaloSpec_t), MESHCOMM_CONFIG_MAGIC, MESHCOMM_VERSION_CODE, NULL, 0, 0, 1, meshcommFloat32, 0, \
    0, meshcommHaloP2p, meshcommMemoryHost }

/**
 * Collective over `comm`: validates `spec` and checks every rank passed the same. `comm` must
 * outlive the plan. Errors: meshcommInvalidArgument (naming the field and value; ranks that
 * disagree), meshcommUnsupported (a strategy this backend lacks).
 */
MESHCOMM_C_API meshcommResult_t meshcommHaloPlanCreate(meshcommComm_t comm, const meshcommHaloSpec_t* spec,
                                                       meshcommHaloPlan_t* plan);

/** Rows of the extended buffer and the index of the first own row. Outputs may be NULL. Local. */
MESHCOMM_C_API meshcommResult_t meshcommHaloPlanRows(meshcommHaloPlan_t plan, size_t* extended_rows,
                                                     size_t* own_first_row);

/**
 * Forward: fills the halo rows of `extended` (extended_rows rows) from their owners. `stream`
 * orders CUDA memory only. Errors: meshcommInvalidArgument (NULL buffer), meshcommAborted; through
 * the work: meshcommTimeout naming the neighbour not heard from, meshcommPeerFailure.
 */
MESHCOMM_C_API meshcommResult_t meshcommHaloStart(meshcommHaloPlan_t plan, void* extended, void* stream,
                                                  meshcommWork_t* work);

/**
 * Adjoint (the transpose of the forward): adds the halo rows of `extended_gradient` into the rows
 * they came from, on their owners; halo rows are left as they were. Errors: as meshcommHaloStart.
 */
MESHCOMM_C_API meshcommResult_t meshcommHaloStartAdjoint(meshcommHaloPlan_t plan, void* extended_gradient,
                                                         void* stream, meshcommWork_t* work);

/** Destroys a plan. NULL is a no-op. */
MESHCOMM_C_API meshcommResult_t meshcommHaloPlanDestroy(meshcommHaloPlan_t plan);

/* ---------------------------------------------------------------------------------------------
 * Ring pipelines (RingAttention)
 * ------------------------------------------------------------------------------------------- */

/** A ring pipeline of two block buffers (opaque). */
typedef struct meshcommRing* meshcommRing_t;

/** A ring's shape (meshcomm::RingPipelineSpec). Fill with MESHCOMM_RING_SPEC_INITIALIZER. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  size_t block_bytes;   /**< bytes of one block; at least 1 */
  int backward;         /**< 0: blocks go to rank + 1; nonzero: to rank - 1 */
  int progress_thread;  /**< default 1: transfers progress while the caller computes */
  meshcommMemory_t memory;
} meshcommRingSpec_t;
#define MESHCOMM_RING_SPEC_INITIALIZER \
  { sizeof(meshcommRingSpec_t), MESHCOMM_CONFIG_MAGIC, MESHCOMM_VERSION_CODE, 0, 0, 1, meshcommMemoryHost }

/** Creates a ring of two block buffers over `comm`. Errors: meshcommInvalidArgument (block_bytes 0). */
MESHCOMM_C_API meshcommResult_t meshcommRingCreate(meshcommComm_t comm, const meshcommRingSpec_t* spec,
                                                   meshcommRing_t* ring);

/** The block to compute on (valid until the next advance) and its size. */
MESHCOMM_C_API meshcommResult_t meshcommRingCurrent(meshcommRing_t ring, void** block, size_t* bytes);

/**
 * Starts sending the current block on and receiving the next; every rank calls it equally often.
 * Errors: meshcommInvalidArgument (a transfer still in flight), meshcommAborted (after a failed
 * transfer: destroy the ring); through the work: meshcommTimeout naming the neighbour.
 */
MESHCOMM_C_API meshcommResult_t meshcommRingStart(meshcommRing_t ring, void* stream, meshcommWork_t* work);

/** The received block becomes current. Errors: the failed transfer's own, meshcommAborted. */
MESHCOMM_C_API meshcommResult_t meshcommRingAdvance(meshcommRing_t ring, void* stream);

/** The ranks this one sends to and receives from. Outputs may be NULL. */
MESHCOMM_C_API meshcommResult_t meshcommRingPeers(meshcommRing_t ring, int* send_peer, int* recv_peer);

/** Destroys a ring. NULL is a no-op. */
MESHCOMM_C_API meshcommResult_t meshcommRingDestroy(meshcommRing_t ring);

#ifdef __cplusplus
}
#endif

#endif /* MESHCOMM_MESHCOMM_H */
