#pragma once

// Block attention on CUDA memory (fp32): cuBLAS GEMMs for the scores and products, and kernels
// for the masked softmax, the fp32 log-sum-exp merge and the softmax gradient. The GPU
// counterpart of attention/block_attention.hpp, for RingAttention on the GPU.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "attention/attention_region.hpp"
#include "meshcomm/stream.hpp"

namespace meshcomm::layers::device {

/// One block of queries against one block of keys, all device pointers: rows [rows, heads,
/// head_dim] row-major, positions global (a query sees keys at positions <= its own when
/// `causal`). Only `region` is computed; outside it every pair must be masked.
struct DeviceBlock {
  const float* queries = nullptr;
  const std::int64_t* query_positions = nullptr;
  const float* keys = nullptr;
  const float* values = nullptr;
  const std::int64_t* key_positions = nullptr;
  std::size_t heads = 1;
  std::size_t head_dim = 1;
  bool causal = false;
  AttentionRegion region;
};

/// cuBLAS and scratch for block attention on one stream; every call is queued on it and returns
/// at once.
class DeviceBlockAttention {
 public:
  /// For blocks of up to `max_key_rows` keys over `heads` heads of `head_dim`. The scores of a
  /// block are formed a tile of query rows at a time, each tile's scores within `score_bytes`
  /// (two such buffers are kept), so the scratch stays bounded whatever the block's length. The
  /// GEMMs leave `reserve_sms` SMs free for work beside them (0: they may take all).
  DeviceBlockAttention(StreamRef stream, std::size_t max_query_rows, std::size_t max_key_rows, std::size_t heads,
                       std::size_t head_dim, int reserve_sms = 0, std::size_t score_bytes = kDefaultScoreBytes);

  /// The default bound on one tile's scores: 1 GiB.
  static constexpr std::size_t kDefaultScoreBytes = std::size_t{1} << 30;

  /// Query rows per tile.
  [[nodiscard]] std::size_t tile_rows() const noexcept;
  ~DeviceBlockAttention();
  DeviceBlockAttention(const DeviceBlockAttention&) = delete;
  DeviceBlockAttention& operator=(const DeviceBlockAttention&) = delete;

  /// Attention of the region's queries over its keys, merged by log-sum-exp in fp32 into `out`
  /// [rows, heads, dim] and `lse` [rows, heads] (start them at zeros and -infinity); a query
  /// that sees no key keeps zeros and -infinity.
  void forward(const DeviceBlock& block, float* out, float* lse);

  /// The block's gradients given the final `lse` and `delta` (see `delta`): adds to `d_queries`
  /// and to `d_keys`, `d_values` (rows aligned with the block's keys).
  void backward(const DeviceBlock& block, const float* lse, const float* d_out, const float* delta, float* d_queries,
                float* d_keys, float* d_values);

  /// delta[q, h] = Σ_d d_out[q, h, d] * out[q, h, d] over `rows` rows.
  void delta(const float* out, const float* d_out, float* delta, std::size_t rows);

 private:
  /// One tile of query rows (the region's queries fit the scratch).
  void forward_tile(const DeviceBlock& block, float* out, float* lse);
  void backward_tile(const DeviceBlock& block, const float* lse, const float* d_out, const float* delta,
                     float* d_queries, float* d_keys, float* d_values);
  /// Runs `tile` on each tile of query rows of `block`'s region.
  template <class Tile>
  void for_each_tile(const DeviceBlock& block, const char* operation, Tile&& tile);

  struct Resources;
  std::unique_ptr<Resources> resources_;
};

/// data[i] = value for `count` fp32 elements of device memory, queued on `stream`.
void fill(float* data, std::size_t count, float value, StreamRef stream);

/// into[i] += from[i] for `count` fp32 elements of device memory, queued on `stream`.
void add_into(float* into, const float* from, std::size_t count, StreamRef stream);

}  // namespace meshcomm::layers::device
