/*
 * 03_halo_c: a halo exchange for causal sliding-window attention, from C through meshcomm.h.
 *
 * Each rank holds `shard` rows of a sequence (row = `width` floats) in an extended buffer with
 * `window - 1` halo rows in front; the exchange fills them with the last rows of the previous
 * rank's shard, and the adjoint adds gradients in the halo rows back into the rows they came
 * from. Both results are checked exactly. No MPI in the program: it starts under torchrun,
 * srun --mpi=pmix, prterun or mpirun (meshcommBootstrapFromEnvironment finds out which).
 *
 *   mpirun -np 4 ./halo_c                  # PMIx
 *   torchrun --nproc_per_node 4 ./halo_c   # torchrun's environment (any launcher that sets RANK,
 *                                          # WORLD_SIZE, MASTER_ADDR, MASTER_PORT)
 */
#include <meshcomm/meshcomm.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints the failed call and its full message, and leaves. */
#define CHECK(call)                                                                                   \
  do {                                                                                                \
    meshcommResult_t result_ = (call);                                                                \
    if (result_ != meshcommSuccess) {                                                                 \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, meshcommGetErrorString(result_), \
              meshcommGetLastError(comm));                                                            \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

enum { kShard = 6, kWidth = 4, kWindow = 3 };

/* The value of element `e` of global row `g`: every row distinct. */
static float value_of(size_t g, size_t e) { return (float)(g * 10 + e); }

int main(void) {
  int rank = -1;
  int nranks = 0;
  meshcommComm_t comm = NULL;
  meshcommBootstrap_t bootstrap = NULL;
  const char* launcher = NULL;
  CHECK(meshcommBootstrapFromEnvironment(0, &bootstrap));
  CHECK(meshcommBootstrapInfo(bootstrap, &rank, &nranks, &launcher));
  CHECK(meshcommCommCreate(bootstrap, NULL, &comm));

  size_t* shard_rows = malloc(sizeof(size_t) * (size_t)nranks);
  for (int r = 0; r < nranks; ++r) shard_rows[r] = kShard;
  meshcommHaloSpec_t spec = MESHCOMM_HALO_SPEC_INITIALIZER;
  spec.shard_rows = shard_rows;
  spec.left = kWindow - 1;
  spec.row_elements = kWidth;
  spec.type = meshcommFloat32;
  meshcommHaloPlan_t plan = NULL;
  CHECK(meshcommHaloPlanCreate(comm, &spec, &plan));
  size_t rows = 0, first = 0;
  CHECK(meshcommHaloPlanRows(plan, &rows, &first));

  /* Forward: own rows hold their global values, halo rows -1 until filled. */
  float* keys = malloc(sizeof(float) * rows * kWidth);
  for (size_t row = 0; row < rows; ++row) {
    for (size_t e = 0; e < kWidth; ++e) {
      keys[row * kWidth + e] = row < first ? -1.0f : value_of((size_t)rank * kShard + row - first, e);
    }
  }
  meshcommWork_t work = NULL;
  CHECK(meshcommHaloStart(plan, keys, NULL, &work));
  CHECK(meshcommWorkWait(work, 0));
  CHECK(meshcommWorkFree(work));
  int wrong = 0;
  for (size_t row = 0; row < first; ++row) {
    for (size_t e = 0; e < kWidth; ++e) {
      /* Halo row `row` is global row rank * shard - first + row; rank 0 has none before it. */
      const float expected = rank == 0 ? -1.0f : value_of((size_t)rank * kShard - first + row, e);
      wrong += keys[row * kWidth + e] != expected;
    }
  }

  /* Adjoint: a gradient of 1 in every halo row lands on the rows it came from. */
  float* gradient = calloc(rows * kWidth, sizeof(float));
  for (size_t index = 0; index < first * kWidth; ++index) gradient[index] = 1.0f;
  CHECK(meshcommHaloStartAdjoint(plan, gradient, NULL, &work));
  CHECK(meshcommWorkWait(work, 0));
  CHECK(meshcommWorkFree(work));
  for (size_t row = first; row < rows; ++row) {
    const int sent_on = rank + 1 < nranks && row >= rows - (kWindow - 1);
    for (size_t e = 0; e < kWidth; ++e) wrong += gradient[row * kWidth + e] != (sent_on ? 1.0f : 0.0f);
  }

  /* Everyone learns whether anyone saw a wrong value. */
  int everyone = 0;
  CHECK(meshcommAllReduce(comm, &wrong, &everyone, 1, meshcommInt32, meshcommSum, NULL, &work));
  CHECK(meshcommWorkWait(work, 0));
  CHECK(meshcommWorkFree(work));
  const char* backend = NULL;
  CHECK(meshcommCommBackend(comm, &backend));
  if (rank == 0) {
    printf("halo_c: %d ranks (%s bootstrap, %s backend), window %d: %s\n", nranks, launcher, backend, kWindow,
           everyone == 0 ? "halo rows and adjoint sums exact on every rank" : "WRONG VALUES");
  }

  free(gradient);
  free(keys);
  free(shard_rows);
  CHECK(meshcommHaloPlanDestroy(plan));
  CHECK(meshcommCommDestroy(comm));
  comm = NULL;
  CHECK(meshcommBootstrapDestroy(bootstrap));
  return everyone == 0 ? 0 : 1;
}
