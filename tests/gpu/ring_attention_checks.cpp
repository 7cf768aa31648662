#include "ring_attention_checks.hpp"

#include <vector>

#include "device/device_ring_attention.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::testing {

namespace {

/// A host tensor's copy on the device.
std::shared_ptr<std::byte> upload(const std::vector<float>& host) {
  auto device = verifiable::device_bytes(host.size() * sizeof(float));
  verifiable::copy_to_device(device.get(), host.data(), host.size() * sizeof(float));
  return device;
}

float* floats(const std::shared_ptr<std::byte>& device) { return reinterpret_cast<float*>(device.get()); }

void download(std::vector<float>& host, const std::shared_ptr<std::byte>& device) {
  verifiable::copy_to_host(host.data(), device.get(), host.size() * sizeof(float));
}

}  // namespace

RingAttentionRun device_ring_attention(RingTransfer transfer, std::size_t score_bytes) {
  return [transfer, score_bytes](Communicator& comm, RingAttentionCase& problem) {
    const auto stream = verifiable::new_stream();
    const auto& shape = problem.shape;
    const std::size_t bytes = problem.out.size() * sizeof(float);
    auto q = upload(problem.queries), k = upload(problem.keys), v = upload(problem.values);
    auto d_out = upload(problem.d_out);
    auto out = verifiable::device_bytes(bytes), d_q = verifiable::device_bytes(bytes);
    auto d_k = verifiable::device_bytes(bytes), d_v = verifiable::device_bytes(bytes);
    auto lse = verifiable::device_bytes(shape.rows * shape.heads * sizeof(float));
    {
      layers::DeviceRingOptions options{.stream = StreamRef(stream.get()), .transfer = transfer};
      if (score_bytes > 0) options.score_bytes = score_bytes;
      layers::DeviceRingAttention ring(comm, shape, problem.positions, options);
      ring.forward(floats(q), floats(k), floats(v), floats(out), floats(lse));
      ring.backward(floats(q), floats(k), floats(v), floats(out), floats(lse), floats(d_out), floats(d_q), floats(d_k),
                    floats(d_v));
      verifiable::synchronize_stream(stream.get());
    }
    download(problem.out, out);
    download(problem.d_queries, d_q);
    download(problem.d_keys, d_k);
    download(problem.d_values, d_v);
  };
}

}  // namespace meshcomm::testing
