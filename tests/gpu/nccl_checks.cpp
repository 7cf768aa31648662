#include "nccl_checks.hpp"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cases/collective_cases.hpp"
#include "cases/halo_cases.hpp"
#include "meshcomm/cuda_interop.hpp"
#include "meshcomm/error.hpp"
#include "verifiable/device_staging.hpp"

namespace meshcomm::testing {

namespace {
void expect_cuda(cudaError_t status) { ASSERT_EQ(status, cudaSuccess) << cudaGetErrorString(status); }
}  // namespace

void check_nccl_collective_matrices(Communicator& comm) {
  ASSERT_EQ(comm.backend(), BackendKind::nccl);
  for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                    CollectiveKind::all_to_all, CollectiveKind::all_to_allv, CollectiveKind::broadcast}) {
    check_collective_matrix(comm, kind, MemoryKind::cuda);
  }
}

void check_nccl_stream_order(Communicator& comm) {
  constexpr std::size_t count = 1 << 22;  // 16 MiB of int32: long enough that a race would show
  auto input = verifiable::device_bytes(count * sizeof(std::int32_t));
  auto output = verifiable::device_bytes(count * sizeof(std::int32_t));
  cudaStream_t stream = nullptr;
  expect_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::int32_t> result(count, -1);
  for (int round = 1; round <= 3; ++round) {
    // Every byte 0x0round: each int32 is round * 0x01010101, summed over the ranks.
    expect_cuda(cudaMemsetAsync(input.get(), round, count * sizeof(std::int32_t), stream));
    auto work = comm.all_reduce(ConstBufferView(input.get(), count, DataType::i32, MemoryKind::cuda),
                                BufferView(output.get(), count, DataType::i32, MemoryKind::cuda),
                                {.stream = stream_ref(stream)});
    expect_cuda(cudaMemcpyAsync(result.data(), output.get(), count * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                                stream));
    expect_cuda(cudaStreamSynchronize(stream));
    work.wait();
    const std::int32_t expected = round * 0x01010101 * comm.size();
    std::size_t wrong = 0;
    for (auto value : result) wrong += value != expected ? 1 : 0;
    EXPECT_EQ(wrong, 0U) << "round " << round << ": first element " << result[0] << ", expected " << expected;
  }
  expect_cuda(cudaStreamDestroy(stream));
}

void check_nccl_back_to_back(Communicator& comm) {
  constexpr std::size_t count = 1 << 24;  // 64 MiB of int32 per call: long enough that a race would show
  constexpr int calls = 8;
  constexpr int tested_after = 3;  // the first work is looked at once calls 0..3 are queued
  std::vector<std::shared_ptr<std::byte>> inputs;
  std::vector<std::shared_ptr<std::byte>> outputs;
  cudaStream_t stream = nullptr;
  cudaStream_t reader = nullptr;
  expect_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  expect_cuda(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  for (int call = 0; call < calls; ++call) {
    inputs.push_back(verifiable::device_bytes(count * sizeof(std::int32_t)));
    outputs.push_back(verifiable::device_bytes(count * sizeof(std::int32_t)));
    expect_cuda(cudaMemset(inputs.back().get(), call + 1, count * sizeof(std::int32_t)));
    expect_cuda(cudaMemset(outputs.back().get(), 0xff, count * sizeof(std::int32_t)));
  }
  expect_cuda(cudaDeviceSynchronize());
  std::vector<Work> works;
  for (int call = 0; call < calls; ++call) {
    works.push_back(comm.all_reduce(ConstBufferView(inputs[call].get(), count, DataType::i32, MemoryKind::cuda),
                                    BufferView(outputs[call].get(), count, DataType::i32, MemoryKind::cuda),
                                    {.stream = stream_ref(stream)}));
    if (call == tested_after) (void)works[0].test();
  }
  // Wait for each call's work in turn from the first; read its output on a stream that is not
  // ordered after the collectives, so only the work's completion makes the result visible.
  std::vector<std::int32_t> result(count);
  for (int call = 0; call < calls; ++call) {
    works[call].wait();
    expect_cuda(cudaMemcpyAsync(result.data(), outputs[call].get(), count * sizeof(std::int32_t),
                                cudaMemcpyDeviceToHost, reader));
    expect_cuda(cudaStreamSynchronize(reader));
    const std::int32_t expected = (call + 1) * 0x01010101 * comm.size();
    std::size_t wrong = 0;
    for (auto value : result) wrong += value != expected ? 1 : 0;
    EXPECT_EQ(wrong, 0U) << "call " << call << ": last element " << result.back() << ", expected " << expected;
  }
  expect_cuda(cudaStreamDestroy(reader));
  expect_cuda(cudaStreamDestroy(stream));
}

void check_nccl_halo(Communicator& comm) {
  for (auto strategy : {HaloStrategy::p2p, HaloStrategy::neighbor_alltoallv}) {
    check_halo_contents(comm, strategy, MemoryKind::cuda);
    check_halo_adjoint(comm, strategy, MemoryKind::cuda);
    check_halo_graph(comm, strategy, MemoryKind::cuda);
  }
}

void check_nccl_split(Communicator& comm) {
  comm.barrier();
  auto half = comm.split(comm.rank() % 2, comm.rank());
  EXPECT_EQ(half.backend(), BackendKind::nccl);
  check_collective_matrix(half, CollectiveKind::all_gather, MemoryKind::cuda);
  half.barrier();
}

void check_nccl_timeout_aborts(Communicator& comm) {
  auto buffer = verifiable::device_bytes(64);
  try {
    // Nobody sends this: the wait must end in an error, not hang (a hang fails by ctest's timeout).
    comm.irecv(BufferView(buffer.get(), 16, DataType::f32, MemoryKind::cuda), comm.rank(), 5)
        .wait(std::chrono::milliseconds(500));
    ADD_FAILURE() << "a receive with no sender completed";
  } catch (const Error& error) {
    EXPECT_TRUE(error.code() == ErrorCode::timeout || error.code() == ErrorCode::backend_failure) << error.what();
    EXPECT_NE(std::string(error.what()).find("abort"), std::string::npos) << error.what();
  }
  try {
    comm.all_reduce(ConstBufferView(buffer.get(), 4, DataType::f32, MemoryKind::cuda),
                    BufferView(buffer.get(), 4, DataType::f32, MemoryKind::cuda))
        .wait();
    ADD_FAILURE() << "an aborted communicator ran a collective";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::aborted) << error.what();
  }
}

}  // namespace meshcomm::testing
