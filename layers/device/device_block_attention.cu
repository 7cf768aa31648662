#include "device_block_attention.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda_support.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::layers::device {

namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / kWarp;

__device__ bool visible(std::int64_t query, std::int64_t key, bool causal) { return !causal || key <= query; }

__device__ float warp_max(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffU, value, offset));
  return value;
}

__device__ float warp_sum(float value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffU, value, offset);
  return value;
}

/// Where a score row's query and key positions start: the region's corner.
struct RegionPositions {
  const std::int64_t* queries;
  const std::int64_t* keys;
  std::size_t query_rows;
  std::size_t key_rows;
  std::size_t heads;
  bool causal;
};

/// One warp per (head, query) score row: masked softmax in place (the probabilities of this
/// block, normalised within it) and the block's log-sum-exp at [query, head] (-inf: nothing seen).
__global__ void softmax_rows(float* scores, float* block_lse, RegionPositions at) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (row >= at.heads * at.query_rows) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::size_t head = row / at.query_rows;
  const std::size_t query = row % at.query_rows;
  const std::int64_t position = at.queries[query];
  float* scores_row = scores + row * at.key_rows;
  float best = -INFINITY;
  for (std::size_t k = lane; k < at.key_rows; k += kWarp) {
    if (visible(position, at.keys[k], at.causal)) best = fmaxf(best, scores_row[k]);
  }
  best = warp_max(best);
  float total = 0.0F;
  for (std::size_t k = lane; k < at.key_rows; k += kWarp) {
    const float weight = visible(position, at.keys[k], at.causal) ? expf(scores_row[k] - best) : 0.0F;
    scores_row[k] = weight;
    total += weight;
  }
  total = warp_sum(total);
  const float inverse = total > 0.0F ? 1.0F / total : 0.0F;
  for (std::size_t k = lane; k < at.key_rows; k += kWarp) scores_row[k] *= inverse;
  if (lane == 0) block_lse[query * at.heads + head] = total > 0.0F ? best + logf(total) : -INFINITY;
}

/// One warp per (query, head): merges the block's normalised output into the running one by
/// log-sum-exp in fp32.
__global__ void merge_by_lse(float* out, float* lse, const float* block_out, const float* block_lse,
                             std::size_t pairs, std::size_t head_dim) {
  const std::size_t pair = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (pair >= pairs) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const float incoming = block_lse[pair];
  if (incoming == -INFINITY) return;  // the block showed this query nothing
  const float running = lse[pair];
  float keep = 0.0F;
  float add = 1.0F;
  float merged = incoming;
  if (running != -INFINITY) {
    const float top = fmaxf(running, incoming);
    merged = top + logf(expf(running - top) + expf(incoming - top));
    keep = expf(running - merged);
    add = expf(incoming - merged);
  }
  float* result = out + pair * head_dim;
  const float* part = block_out + pair * head_dim;
  for (std::size_t d = lane; d < head_dim; d += kWarp) result[d] = result[d] * keep + part[d] * add;
  __syncwarp();
  if (lane == 0) lse[pair] = merged;
}

/// Element-wise over the [head, query, key] scores: probabilities from the final log-sum-exp (0
/// where masked) and dS = P * (dP - delta) * scale in place of dP.
__global__ void softmax_gradient(float* scores, float* d_probabilities, const float* lse, const float* delta,
                                 RegionPositions at, float scale) {
  const std::size_t total = at.heads * at.query_rows * at.key_rows;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t key = i % at.key_rows;
    const std::size_t row = i / at.key_rows;
    const std::size_t query = row % at.query_rows;
    const std::size_t head = row / at.query_rows;
    const float row_lse = lse[query * at.heads + head];
    const bool seen = row_lse != -INFINITY && visible(at.queries[query], at.keys[key], at.causal);
    const float probability = seen ? expf(scores[i] - row_lse) : 0.0F;
    scores[i] = probability;
    d_probabilities[i] = probability * (d_probabilities[i] - delta[query * at.heads + head]) * scale;
  }
}

/// One warp per (row, head): delta = Σ_d d_out * out.
__global__ void row_dots(const float* out, const float* d_out, float* delta, std::size_t pairs, std::size_t head_dim) {
  const std::size_t pair = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  if (pair >= pairs) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  float sum = 0.0F;
  for (std::size_t d = lane; d < head_dim; d += kWarp) sum += out[pair * head_dim + d] * d_out[pair * head_dim + d];
  sum = warp_sum(sum);
  if (lane == 0) delta[pair] = sum;
}

/// data[i] = value.
__global__ void fill_elements(float* data, std::size_t count, float value) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = value;
  }
}

/// into[i] += from[i].
__global__ void add_elements(float* into, const float* from, std::size_t count) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    into[i] += from[i];
  }
}

unsigned warp_blocks(std::size_t warps) {
  return static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

}  // namespace

struct DeviceBlockAttention::Resources {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::size_t tile_rows = 0;  // query rows per pass
  std::size_t max_key_rows = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  float* scores = nullptr;           // [heads, tile rows, key rows]
  float* d_probabilities = nullptr;  // the same shape, backward only
  float* block_out = nullptr;        // [tile rows, heads, dim]
  float* block_lse = nullptr;        // [tile rows, heads]

  ~Resources() {
    for (float* buffer : {scores, d_probabilities, block_out, block_lse}) (void)cudaFree(buffer);
    if (blas != nullptr) (void)cublasDestroy(blas);
  }

  void check_fits(const DeviceBlock& block, const char* operation) const {
    if (block.region.key_rows() <= max_key_rows && block.heads == heads && block.head_dim == head_dim) return;
    throw Error(ErrorCode::invalid_argument,
                std::string("block of ") + std::to_string(block.region.key_rows()) + " key rows, " +
                    std::to_string(block.heads) + " heads x " + std::to_string(block.head_dim) +
                    " exceeds the scratch made for " + std::to_string(max_key_rows) + " key rows, " +
                    std::to_string(heads) + " heads x " + std::to_string(head_dim),
                {.operation = operation});
  }

  /// One call's region in the terms the kernels and GEMMs use.
  struct Span {
    std::size_t queries;  // rows of the region
    std::size_t keys;
    std::size_t query_at;  // element offsets of its first query and key rows
    std::size_t key_at;
    float scale;  // 1 / sqrt(head_dim)
    RegionPositions positions;
  };

  /// Locates a tile's region (`queries` 0: nothing to do).
  [[nodiscard]] Span span_of(const DeviceBlock& block) const {
    const auto& region = block.region;
    if (region.empty()) return {};
    const std::size_t row = heads * head_dim;
    return {region.query_rows(),
            region.key_rows(),
            region.query_begin * row,
            region.key_begin * row,
            1.0F / std::sqrt(static_cast<float>(head_dim)),
            {block.query_positions + region.query_begin, block.key_positions + region.key_begin, region.query_rows(),
             region.key_rows(), heads, block.causal}};
  }

  /// C[h] = alpha * op(A[h]) op(B[h]) + beta * C[h] for every head, column-major as cuBLAS sees
  /// the row-major tensors (heads `stride` elements apart in A and B).
  void gemm(cublasOperation_t a_op, cublasOperation_t b_op, std::size_t m, std::size_t n, std::size_t k, float alpha,
            const float* a, std::size_t lda, long long a_stride, const float* b, std::size_t ldb, long long b_stride,
            float beta, float* c, std::size_t ldc, long long c_stride) {
    check(cublasSgemmStridedBatched(blas, a_op, b_op, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                                    &alpha, a, static_cast<int>(lda), a_stride, b, static_cast<int>(ldb), b_stride,
                                    &beta, c, static_cast<int>(ldc), c_stride, static_cast<int>(heads)),
          "cublasSgemmStridedBatched");
  }

  /// scores[h][q][k] = alpha * left[q, h] · right[k, h] over the region (left: queries or d_out;
  /// right: keys or values), as the transposed column-major [k, q] product.
  void row_products(const float* left, const float* right, float* into, std::size_t queries, std::size_t keys,
                    float alpha) {
    const std::size_t row = heads * head_dim;
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, keys, queries, head_dim, alpha, right, row, static_cast<long long>(head_dim), left,
         row, static_cast<long long>(head_dim), 0.0F, into, keys, static_cast<long long>(queries * keys));
  }
};

DeviceBlockAttention::DeviceBlockAttention(StreamRef stream, std::size_t max_query_rows, std::size_t max_key_rows,
                                           std::size_t heads, std::size_t head_dim, int reserve_sms,
                                           std::size_t score_bytes)
    : resources_(std::make_unique<Resources>()) {
  auto& r = *resources_;
  r.stream = static_cast<cudaStream_t>(stream.native_handle());
  const std::size_t row_scores = std::max<std::size_t>(heads * max_key_rows * sizeof(float), 1);
  r.tile_rows = std::clamp<std::size_t>(score_bytes / row_scores, 1, std::max<std::size_t>(max_query_rows, 1));
  r.max_key_rows = max_key_rows;
  r.heads = heads;
  r.head_dim = head_dim;
  check(cublasCreate(&r.blas), "cublasCreate");
  check(cublasSetStream(r.blas, r.stream), "cublasSetStream");
  // fp32 products (no TF32), so the results match the host reference closely.
  check(cublasSetMathMode(r.blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (reserve_sms > 0) {
    int device = 0;
    int sms = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cublasSetSmCountTarget(r.blas, std::max(1, sms - reserve_sms)), "cublasSetSmCountTarget");
  }
  const std::size_t scores = heads * r.tile_rows * max_key_rows;
  r.scores = allocate<float>(scores, "cudaMalloc (scores)");
  r.d_probabilities = allocate<float>(scores, "cudaMalloc (score gradients)");
  r.block_out = allocate<float>(r.tile_rows * heads * head_dim, "cudaMalloc (block output)");
  r.block_lse = allocate<float>(r.tile_rows * heads, "cudaMalloc (block lse)");
}

DeviceBlockAttention::~DeviceBlockAttention() = default;

std::size_t DeviceBlockAttention::tile_rows() const noexcept { return resources_->tile_rows; }

template <class Tile>
void DeviceBlockAttention::for_each_tile(const DeviceBlock& block, const char* operation, Tile&& tile) {
  resources_->check_fits(block, operation);
  if (block.region.empty()) return;
  const std::size_t step = resources_->tile_rows;
  for (std::size_t first = block.region.query_begin; first < block.region.query_end; first += step) {
    DeviceBlock part = block;
    part.region.query_begin = first;
    part.region.query_end = std::min(first + step, block.region.query_end);
    tile(part);
  }
}

void DeviceBlockAttention::forward(const DeviceBlock& block, float* out, float* lse) {
  for_each_tile(block, "DeviceBlockAttention::forward", [&](const DeviceBlock& part) { forward_tile(part, out, lse); });
}

void DeviceBlockAttention::backward(const DeviceBlock& block, const float* lse, const float* d_out, const float* delta,
                                    float* d_queries, float* d_keys, float* d_values) {
  for_each_tile(block, "DeviceBlockAttention::backward", [&](const DeviceBlock& part) {
    backward_tile(part, lse, d_out, delta, d_queries, d_keys, d_values);
  });
}

void DeviceBlockAttention::forward_tile(const DeviceBlock& block, float* out, float* lse) {
  auto& r = *resources_;
  const auto at = r.span_of(block);
  if (at.queries == 0) return;
  const std::size_t row = r.heads * r.head_dim;
  const auto head = static_cast<long long>(r.head_dim);
  r.row_products(block.queries + at.query_at, block.keys + at.key_at, r.scores, at.queries, at.keys, at.scale);
  softmax_rows<<<warp_blocks(r.heads * at.queries), kThreads, 0, r.stream>>>(r.scores, r.block_lse, at.positions);
  check(cudaGetLastError(), "softmax_rows");
  // block_out[q, h] = P[h][q] V[h]: column-major [dim, q] = V^T [dim, k] x P^T [k, q].
  r.gemm(CUBLAS_OP_N, CUBLAS_OP_N, r.head_dim, at.queries, at.keys, 1.0F, block.values + at.key_at, row, head,
         r.scores, at.keys, static_cast<long long>(at.queries * at.keys), 0.0F, r.block_out, row, head);
  const std::size_t first = block.region.query_begin;
  merge_by_lse<<<warp_blocks(at.queries * r.heads), kThreads, 0, r.stream>>>(
      out + first * row, lse + first * r.heads, r.block_out, r.block_lse, at.queries * r.heads, r.head_dim);
  check(cudaGetLastError(), "merge_by_lse");
}

void DeviceBlockAttention::backward_tile(const DeviceBlock& block, const float* lse, const float* d_out,
                                         const float* delta, float* d_queries, float* d_keys, float* d_values) {
  auto& r = *resources_;
  const auto at = r.span_of(block);
  if (at.queries == 0) return;
  const std::size_t row = r.heads * r.head_dim;
  const auto head = static_cast<long long>(r.head_dim);
  const auto scores = static_cast<long long>(at.queries * at.keys);
  r.row_products(block.queries + at.query_at, block.keys + at.key_at, r.scores, at.queries, at.keys, at.scale);
  r.row_products(d_out + at.query_at, block.values + at.key_at, r.d_probabilities, at.queries, at.keys, 1.0F);
  const std::size_t elements = r.heads * at.queries * at.keys;
  const auto grid = static_cast<unsigned>(std::min<std::size_t>((elements + kThreads - 1) / kThreads, 8192));
  const std::size_t first = block.region.query_begin;
  softmax_gradient<<<grid, kThreads, 0, r.stream>>>(r.scores, r.d_probabilities, lse + first * r.heads,
                                                     delta + first * r.heads, at.positions, at.scale);
  check(cudaGetLastError(), "softmax_gradient");
  // dV[k] += P^T dO and dK[k] += dS^T Q: column-major [dim, k] = [dim, q] x ([k, q])^T.
  r.gemm(CUBLAS_OP_N, CUBLAS_OP_T, r.head_dim, at.keys, at.queries, 1.0F, d_out + at.query_at, row, head, r.scores,
         at.keys, scores, 1.0F, d_values + at.key_at, row, head);
  r.gemm(CUBLAS_OP_N, CUBLAS_OP_T, r.head_dim, at.keys, at.queries, 1.0F, block.queries + at.query_at, row, head,
         r.d_probabilities, at.keys, scores, 1.0F, d_keys + at.key_at, row, head);
  // dQ[q] += dS K: column-major [dim, q] = K^T [dim, k] x dS^T [k, q].
  r.gemm(CUBLAS_OP_N, CUBLAS_OP_N, r.head_dim, at.queries, at.keys, 1.0F, block.keys + at.key_at, row, head,
         r.d_probabilities, at.keys, scores, 1.0F, d_queries + at.query_at, row, head);
}

void fill(float* data, std::size_t count, float value, StreamRef stream) {
  if (count == 0) return;
  const auto grid = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
  fill_elements<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream.native_handle())>>>(data, count, value);
  check(cudaGetLastError(), "fill_elements");
}

void add_into(float* into, const float* from, std::size_t count, StreamRef stream) {
  if (count == 0) return;
  const auto grid = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
  add_elements<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream.native_handle())>>>(into, from, count);
  check(cudaGetLastError(), "add_elements");
}

void DeviceBlockAttention::delta(const float* out, const float* d_out, float* delta, std::size_t rows) {
  auto& r = *resources_;
  const std::size_t pairs = rows * r.heads;
  if (pairs == 0) return;
  row_dots<<<warp_blocks(pairs), kThreads, 0, r.stream>>>(out, d_out, delta, pairs, r.head_dim);
  check(cudaGetLastError(), "row_dots");
}

}  // namespace meshcomm::layers::device
