#include <algorithm>
#include <cstring>

#include "memory_floor/floor_kernels.hpp"
#include "memory_floor/memory_floor.hpp"

namespace meshcomm::perf::memory_floor {

std::size_t measure_reduce_scatter(const Run& run, std::size_t bytes) {
  auto& comm = run.comm;
  const MPI_Comm raw = run.raw;
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t count = bytes / sizeof(float) / static_cast<std::size_t>(size);  // output elements
  const std::size_t block = count * sizeof(float);
  bytes = block * static_cast<std::size_t>(size);
  const auto own_value = static_cast<float>(rank + 1);
  PageBuffer user_input(bytes, 0);
  PageBuffer user_output(block, 0);
  PageBuffer reduced_by_mpi(block, 0);  // Open MPI's own, as reduce_scatter_perf gives native its buffers
  PageBuffer mpi_in_place(bytes, 0);
  PageBuffer private_source(bytes, 0);
  PageBuffer floor_output(block, 0);
  fill_floats(user_input.data, bytes, own_value);
  fill_floats(mpi_in_place.data, bytes, own_value);
  fill_floats(private_source.data, bytes, 1.0F);
  auto shared_input = comm.allocate_shared(bytes);
  auto shared_output = comm.allocate_shared(block);
  const auto shm_reduce = [&](bool in_place) {
    auto* input = static_cast<std::byte*>(shared_input.data());
    void* output = in_place ? input + static_cast<std::size_t>(rank) * block : shared_output.data();
    comm.reduce_scatter(ConstBufferView(input, count * size, DataType::f32),
                        BufferView(output, count, DataType::f32), {.algorithm = "shm"})
        .wait();
  };
  const auto mpi_reduce = [&](bool in_place, bool nonblocking) {
    const void* send = in_place ? MPI_IN_PLACE : user_input.data;
    void* receive = in_place ? mpi_in_place.data : reduced_by_mpi.data;
    const int per_rank = static_cast<int>(count);
    call_mpi(
        nonblocking, [&] { MPI_Reduce_scatter_block(send, receive, per_rank, MPI_FLOAT, MPI_SUM, raw); },
        [&](MPI_Request* request) {
          MPI_Ireduce_scatter_block(send, receive, per_rank, MPI_FLOAT, MPI_SUM, raw, request);
        });
  };
  // In place the sums land in the first of the blocks read, as meshcomm's in-place output is the
  // rank's own block of its input: no separate output to write.
  const auto floor = [&](bool streaming, bool in_place) {
    return [&, streaming, in_place] {
      sum_blocks(in_place ? private_source.data : floor_output.data, private_source.data, size, block, streaming);
    };
  };
  // In place, every call sums the sums of the call before: the values grow (to infinity after
  // enough calls), which costs nothing extra in these kernels.
  std::vector<Variant> variants = {
      {"MPI_Reduce_scatter_block", "Open MPI's reduce-scatter", false, Role::mpi, [&] { mpi_reduce(false, false); }},
      {"MPI_Ireduce_scatter_block", "the same, nonblocking (meshcomm's native)", false, Role::mpi,
       [&] { mpi_reduce(false, true); }},
      {"meshcomm shm", "reduce_scatter algo=shm, shared buffers", false, Role::other, [&] { shm_reduce(false); }},
      {"meshcomm default, user buffers", "reduce_scatter as the table picks it on them", false, Role::other,
       [&] {
         comm.reduce_scatter(ConstBufferView(user_input.data, count * size, DataType::f32),
                             BufferView(user_output.data, count, DataType::f32))
             .wait();
       }},
      {"read+write floor", "sums of an input's blocks, cached, then streamed out", false, Role::floor,
       floor(true, false)},
      {"read+write floor, plain stores", "the same sums straight into its block", false, Role::floor,
       floor(false, false)},
      {"MPI_Reduce_scatter_block in place", "Open MPI's reduce-scatter, MPI_IN_PLACE", true, Role::mpi,
       [&] { mpi_reduce(true, false); }},
      {"MPI_Ireduce_scatter_block in place", "the same, nonblocking", true, Role::mpi, [&] { mpi_reduce(true, true); }},
      {"meshcomm shm in place", "reduce_scatter algo=shm, output in its input", true, Role::other,
       [&] { shm_reduce(true); }},
      {"read+write floor in place", "the same, the sums over its first block", true, Role::floor,
       floor(true, true)},
      {"read+write floor, plain, in place", "the same, plain stores", true, Role::floor, floor(false, true)},
  };
  // The shm reduce-scatter's results: every element of each rank's output block.
  const std::size_t wrong = count_wrong_sums(
      run, count,
      [&] {
        fill_floats(shared_input.data(), bytes, own_value);
        fill_floats(shared_output.data(), block, 0.0F);
      },
      shm_reduce,
      [&](bool in_place) {
        auto* input = static_cast<const std::byte*>(shared_input.data());
        return reinterpret_cast<const float*>(in_place ? input + static_cast<std::size_t>(rank) * block
                                                       : static_cast<const std::byte*>(shared_output.data()));
      });
  time_and_report(run, bytes, variants);
  return wrong;
}

}  // namespace meshcomm::perf::memory_floor
