#include <algorithm>

#include "memory_floor/floor_kernels.hpp"
#include "memory_floor/memory_floor.hpp"

namespace meshcomm::perf::memory_floor {

std::size_t measure_all_reduce(const Run& run, std::size_t bytes) {
  auto& comm = run.comm;
  const MPI_Comm raw = run.raw;
  const int size = comm.size();
  const int rank = comm.rank();
  const std::size_t share = bytes / sizeof(float) / static_cast<std::size_t>(size);  // elements per rank's share
  const std::size_t count = share * static_cast<std::size_t>(size);
  const std::size_t block = share * sizeof(float);
  bytes = count * sizeof(float);
  const auto own_value = static_cast<float>(rank + 1);
  PageBuffer user_input(bytes, 0);
  PageBuffer user_output(bytes, 0);
  PageBuffer mpi_output(bytes, 0);  // Open MPI's own, as all_reduce_perf gives native its buffers
  PageBuffer mpi_in_place(bytes, 0);
  PageBuffer private_source(bytes, 0);  // the floors' stand-in for every rank's input: a block of each
  PageBuffer peers_outputs(bytes, 0);   // the two-phase floor's stand-in for the peers' reduced shares
  PageBuffer floor_output(bytes, 0);
  fill_floats(user_input.data, bytes, own_value);
  fill_floats(mpi_in_place.data, bytes, own_value);
  fill_floats(private_source.data, bytes, 1.0F);
  auto shared_input = comm.allocate_shared(bytes);
  auto shared_output = comm.allocate_shared(bytes);
  const auto shm_all_reduce = [&](bool in_place) {
    void* output = in_place ? shared_input.data() : shared_output.data();
    comm.all_reduce(ConstBufferView(shared_input.data(), count, DataType::f32),
                    BufferView(output, count, DataType::f32), {.algorithm = "shm"})
        .wait();
  };
  const auto mpi_all_reduce = [&](bool in_place, bool nonblocking) {
    const void* send = in_place ? MPI_IN_PLACE : user_input.data;
    void* receive = in_place ? mpi_in_place.data : mpi_output.data;
    const int elements = static_cast<int>(count);
    call_mpi(
        nonblocking, [&] { MPI_Allreduce(send, receive, elements, MPI_FLOAT, MPI_SUM, raw); },
        [&](MPI_Request* request) { MPI_Iallreduce(send, receive, elements, MPI_FLOAT, MPI_SUM, raw, request); });
  };
  // The one-pass floor: each rank sums its share of every input and writes it into every output
  // (reads and writes an input's bytes), which only an all-reduce that writes into its peers'
  // buffers could do. The two-phase floor is what `shm` moves: a reduce-scatter's traffic into the
  // rank's own share, then an all-gather's copies of the other shares (reads nearly twice as much).
  const auto one_pass_floor = [&](bool in_place, bool streaming) {
    return [&, in_place, streaming] {
      sum_into_every_block(in_place ? private_source.data : floor_output.data, private_source.data, size, block,
                           streaming);
    };
  };
  const auto two_phase_floor = [&](bool in_place) {
    return [&, in_place] {
      std::byte* output = in_place ? private_source.data : floor_output.data;
      sum_blocks(output, private_source.data, size, block, true);
      detail::streaming_copy(output + block, peers_outputs.data + block, bytes - block);
    };
  };
  // In place, every call sums the sums of the call before: the values grow (to infinity after
  // enough calls), which costs nothing extra in these kernels.
  std::vector<Variant> variants = {
      {"MPI_Allreduce", "Open MPI's all-reduce", false, Role::mpi, [&] { mpi_all_reduce(false, false); }},
      {"MPI_Iallreduce", "the same, nonblocking (meshcomm's native)", false, Role::mpi,
       [&] { mpi_all_reduce(false, true); }},
      {"meshcomm shm", "all_reduce algo=shm, shared buffers", false, Role::other, [&] { shm_all_reduce(false); }},
      {"meshcomm default, user buffers", "all_reduce as the table picks it on them", false, Role::other,
       [&] {
         comm.all_reduce(ConstBufferView(user_input.data, count, DataType::f32),
                         BufferView(user_output.data, count, DataType::f32))
             .wait();
       }},
      {"read+write floor", "its share of every input, summed cached, streamed to every output", false, Role::floor,
       one_pass_floor(false, true)},
      {"read+write floor, plain stores", "the same sums copied to every output", false, Role::floor,
       one_pass_floor(false, false)},
      {"two-phase floor", "a reduce-scatter's traffic, then an all-gather's", false, Role::other,
       two_phase_floor(false)},
      {"MPI_Allreduce in place", "Open MPI's all-reduce, MPI_IN_PLACE", true, Role::mpi,
       [&] { mpi_all_reduce(true, false); }},
      {"MPI_Iallreduce in place", "the same, nonblocking", true, Role::mpi, [&] { mpi_all_reduce(true, true); }},
      {"meshcomm shm in place", "all_reduce algo=shm, output over its input", true, Role::other,
       [&] { shm_all_reduce(true); }},
      {"read+write floor in place", "the same, the sums over the inputs", true, Role::floor,
       one_pass_floor(true, true)},
      {"read+write floor, plain, in place", "the same, plain stores", true, Role::floor, one_pass_floor(true, false)},
      {"two-phase floor in place", "the same, over the input", true, Role::other, two_phase_floor(true)},
  };
  // The shm all-reduce's results: every element of each rank's output.
  const std::size_t wrong = count_wrong_sums(
      run, count,
      [&] {
        fill_floats(shared_input.data(), bytes, own_value);
        fill_floats(shared_output.data(), bytes, 0.0F);
      },
      shm_all_reduce,
      [&](bool in_place) {
        return static_cast<const float*>(in_place ? shared_input.data() : shared_output.data());
      });
  time_and_report(run, bytes, variants);
  return wrong;
}

}  // namespace meshcomm::perf::memory_floor
