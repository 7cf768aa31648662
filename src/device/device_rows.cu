// Row moves on device memory: halo packing and unpacking of strided rows, and the adjoint's
// row additions. One thread per vector of each row, the widest vector the layout allows, so a
// pack runs near the speed of a plain device-to-device copy.

#include <cstdint>

#include "cuda_check.hpp"
#include "device_elements.cuh"
#include "device_runtime.hpp"

namespace meshcomm::detail::device {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t work) {
  const std::size_t wanted = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 65535 ? wanted : 65535);
}

/// Calls `body(destination item, source item)` for every item of every pair's rows (`per_row`
/// items of type `Item` per row), the items spread over the whole grid.
template <class Item, class Body>
__device__ void for_each_row_item(std::byte* to, std::size_t to_stride, const std::byte* from,
                                  std::size_t from_stride, const RowPair* pairs, std::size_t count,
                                  std::size_t per_row, Body body) {
  const std::size_t total = count * per_row;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const std::size_t row = i / per_row;
    const std::size_t item = i - row * per_row;
    const RowPair pair = pairs[row];
    body(reinterpret_cast<Item*>(to + pair.to * to_stride)[item],
         reinterpret_cast<const Item*>(from + pair.from * from_stride)[item]);
  }
}

template <class Vector>
__global__ void copy_rows_kernel(std::byte* to, std::size_t to_stride, const std::byte* from, std::size_t from_stride,
                                 const RowPair* pairs, std::size_t count, std::size_t vectors_per_row) {
  for_each_row_item<Vector>(to, to_stride, from, from_stride, pairs, count, vectors_per_row,
                            [](Vector& destination, const Vector& source) { destination = source; });
}

template <class Vector>
__global__ void copy_kernel(std::byte* to, const std::byte* from, std::size_t vectors) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  auto* target = reinterpret_cast<Vector*>(to);
  const auto* source = reinterpret_cast<const Vector*>(from);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += step) {
    target[i] = source[i];
  }
}

template <class Storage, class Codec>
__global__ void add_rows_kernel(std::byte* to, std::size_t to_stride, const std::byte* from, std::size_t from_stride,
                                const RowPair* pairs, std::size_t count, std::size_t row_elements) {
  for_each_row_item<Storage>(to, to_stride, from, from_stride, pairs, count, row_elements,
                             [](Storage& destination, const Storage& source) {
                               destination = Codec::store(static_cast<typename Codec::Compute>(
                                   Codec::load(destination) + Codec::load(source)));
                             });
}

/// The widest of 16, 8, 4, 2, 1 bytes that divides every address and size involved.
std::size_t vector_bytes(const void* to, std::size_t to_stride, const void* from, std::size_t from_stride,
                         std::size_t row_bytes) {
  const auto bits = reinterpret_cast<std::uintptr_t>(to) | reinterpret_cast<std::uintptr_t>(from) | to_stride |
                    from_stride | row_bytes;
  for (std::size_t width : {16, 8, 4, 2}) {
    if (bits % width == 0) return width;
  }
  return 1;
}

void finish(cudaStream_t stream, Completion completion, const char* what) {
  check_cuda(cudaGetLastError(), what);
  if (completion == Completion::on_return) check_cuda(cudaStreamSynchronize(stream), what);
}

}  // namespace

void copy_rows(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
               const RowPair* pairs, std::size_t count, std::size_t row_bytes, StreamRef stream,
               Completion completion) {
  if (count == 0 || row_bytes == 0) return;
  const cudaStream_t queue = stream_or_per_thread(stream);
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  const std::size_t width = vector_bytes(destination, destination_stride, source, source_stride, row_bytes);
  const std::size_t per_row = row_bytes / width;
  const unsigned blocks = blocks_for(count * per_row);
  switch (width) {
    case 16: copy_rows_kernel<uint4><<<blocks, kThreads, 0, queue>>>(to, destination_stride, from, source_stride, pairs, count, per_row); break;
    case 8: copy_rows_kernel<uint2><<<blocks, kThreads, 0, queue>>>(to, destination_stride, from, source_stride, pairs, count, per_row); break;
    case 4: copy_rows_kernel<std::uint32_t><<<blocks, kThreads, 0, queue>>>(to, destination_stride, from, source_stride, pairs, count, per_row); break;
    case 2: copy_rows_kernel<std::uint16_t><<<blocks, kThreads, 0, queue>>>(to, destination_stride, from, source_stride, pairs, count, per_row); break;
    default: copy_rows_kernel<std::uint8_t><<<blocks, kThreads, 0, queue>>>(to, destination_stride, from, source_stride, pairs, count, per_row); break;
  }
  finish(queue, completion, "row copy kernel");
}

void copy_on_stream(void* to, const void* from, std::size_t bytes, int blocks, StreamRef stream) {
  if (bytes == 0) return;
  const std::size_t width = vector_bytes(to, 0, from, 0, bytes);
  const std::size_t vectors = bytes / width;
  const cudaStream_t queue = stream_or_per_thread(stream);
  auto* target = static_cast<std::byte*>(to);
  const auto* source = static_cast<const std::byte*>(from);
  const auto grid = static_cast<unsigned>(blocks);
  switch (width) {
    case 16: copy_kernel<uint4><<<grid, kThreads, 0, queue>>>(target, source, vectors); break;
    case 8: copy_kernel<uint2><<<grid, kThreads, 0, queue>>>(target, source, vectors); break;
    case 4: copy_kernel<std::uint32_t><<<grid, kThreads, 0, queue>>>(target, source, vectors); break;
    case 2: copy_kernel<std::uint16_t><<<grid, kThreads, 0, queue>>>(target, source, vectors); break;
    default: copy_kernel<std::uint8_t><<<grid, kThreads, 0, queue>>>(target, source, vectors); break;
  }
  check_cuda(cudaGetLastError(), "copy kernel");
}

void add_rows(void* destination, std::size_t destination_stride, const void* source, std::size_t source_stride,
              const RowPair* pairs, std::size_t count, std::size_t row_elements, DataType type, StreamRef stream,
              Completion completion) {
  if (count == 0 || row_elements == 0) return;
  const cudaStream_t queue = stream_or_per_thread(stream);
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  by_type(type, [&]<class Storage, class Codec>() {
    add_rows_kernel<Storage, Codec><<<blocks_for(count * row_elements), kThreads, 0, queue>>>(
        to, destination_stride, from, source_stride, pairs, count, row_elements);
  });
  finish(queue, completion, "row addition kernel");
}

}  // namespace meshcomm::detail::device
