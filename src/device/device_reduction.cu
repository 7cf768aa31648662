// Element-wise reductions on device memory, with the host reduction's semantics: f16 and bf16
// are computed in f32 and rounded once per element, integer sums and products wrap.

#include <cstdint>
#include <type_traits>

#include "cuda_check.hpp"
#include "device_elements.cuh"
#include "device_runtime.hpp"

namespace meshcomm::detail::device {

namespace {

// Integer sums wrap: compute in the unsigned type of the same width, where overflow is defined.
template <class T>
using WrapType = std::conditional_t<std::is_integral_v<T> && (sizeof(T) >= sizeof(int)), std::make_unsigned_t<T>, T>;

template <class C, ReduceOp Op>
__device__ C combine(C x, C y) {
  if constexpr (std::is_integral_v<C> && (Op == ReduceOp::sum || Op == ReduceOp::avg || Op == ReduceOp::prod)) {
    using W = WrapType<C>;
    const W wx = static_cast<W>(x);
    const W wy = static_cast<W>(y);
    return static_cast<C>(Op == ReduceOp::prod ? static_cast<W>(wx * wy) : static_cast<W>(wx + wy));
  } else if constexpr (Op == ReduceOp::sum || Op == ReduceOp::avg) {
    return static_cast<C>(x + y);
  } else if constexpr (Op == ReduceOp::prod) {
    return static_cast<C>(x * y);
  } else if constexpr (Op == ReduceOp::min) {
    return y < x ? y : x;
  } else {
    return x < y ? y : x;
  }
}

template <class Storage, class Codec, ReduceOp Op>
__global__ void pair_kernel(Storage* out, const Storage* a, const Storage* b, std::size_t count) {
  using C = typename Codec::Compute;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = Codec::store(combine<C, Op>(Codec::load(a[i]), Codec::load(b[i])));
  }
}

template <class Storage, class Codec>
__global__ void divide_kernel(Storage* data, std::size_t count, int divisor) {
  using C = typename Codec::Compute;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = Codec::store(static_cast<C>(Codec::load(data[i]) / static_cast<C>(divisor)));
  }
}

constexpr unsigned kThreads = 256;

/// Enough blocks to fill the device a few times over; the loops stride over the rest.
unsigned blocks_for(std::size_t count) {
  const std::size_t wanted = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
}

template <class Storage, class Codec>
void pair_typed(void* out, const void* a, const void* b, std::size_t count, ReduceOp op, cudaStream_t stream) {
  auto* o = static_cast<Storage*>(out);
  const auto* x = static_cast<const Storage*>(a);
  const auto* y = static_cast<const Storage*>(b);
  const unsigned blocks = blocks_for(count);
  switch (op) {
    case ReduceOp::sum: pair_kernel<Storage, Codec, ReduceOp::sum><<<blocks, kThreads, 0, stream>>>(o, x, y, count); break;
    case ReduceOp::avg: pair_kernel<Storage, Codec, ReduceOp::avg><<<blocks, kThreads, 0, stream>>>(o, x, y, count); break;
    case ReduceOp::prod: pair_kernel<Storage, Codec, ReduceOp::prod><<<blocks, kThreads, 0, stream>>>(o, x, y, count); break;
    case ReduceOp::min: pair_kernel<Storage, Codec, ReduceOp::min><<<blocks, kThreads, 0, stream>>>(o, x, y, count); break;
    case ReduceOp::max: pair_kernel<Storage, Codec, ReduceOp::max><<<blocks, kThreads, 0, stream>>>(o, x, y, count); break;
  }
}

template <class Storage, class Codec>
void divide_typed(void* data, std::size_t count, int divisor, cudaStream_t stream) {
  divide_kernel<Storage, Codec><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<Storage*>(data), count, divisor);
}

void finish(cudaStream_t stream, const char* what) {
  check_cuda(cudaGetLastError(), what);
  check_cuda(cudaStreamSynchronize(stream), what);
}

}  // namespace

void reduce_pair(void* output, const void* first, const void* second, std::size_t count, DataType type, ReduceOp op,
                 StreamRef stream) {
  if (count == 0) return;
  const cudaStream_t queue = stream_or_per_thread(stream);
  by_type(type, [&]<class Storage, class Codec>() { pair_typed<Storage, Codec>(output, first, second, count, op, queue); });
  finish(queue, "reduction kernel");
}

void reduce_into(void* destination, const void* source, std::size_t count, DataType type, ReduceOp op,
                 StreamRef stream) {
  reduce_pair(destination, destination, source, count, type, op, stream);
}

void divide_for_average(void* data, std::size_t count, DataType type, int divisor, StreamRef stream) {
  if (count == 0 || divisor == 1) return;
  const cudaStream_t queue = stream_or_per_thread(stream);
  by_type(type, [&]<class Storage, class Codec>() { divide_typed<Storage, Codec>(data, count, divisor, queue); });
  finish(queue, "average kernel");
}

}  // namespace meshcomm::detail::device
