// The collective operations of Communicator: validate locally, then hand to the engine.

#include <fmt/format.h>

#include "collective_engine.hpp"
#include "communicator_impl.hpp"
#include "hot_path.hpp"
#include "meshcomm/communicator.hpp"

namespace meshcomm {

MESHCOMM_HOT std::string_view to_string(CollectiveKind kind) noexcept {
  switch (kind) {
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::all_to_allv: return "all_to_allv";
    case CollectiveKind::broadcast: return "broadcast";
  }
  return "unknown";
}

namespace {

using detail::CollectiveArgs;
using detail::CommunicatorImpl;

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto* x = static_cast<const std::byte*>(a);
  const auto* y = static_cast<const std::byte*>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

/// Validates buffers and counts and fills in the common fields of a call's arguments.
class CallChecker {
 public:
  CallChecker(CommunicatorImpl& comm, CollectiveKind kind, std::source_location where) : comm_(comm) {
    args_.kind = kind;
    args_.site = where;
    args_.label = comm.begin(to_string(kind).data());
  }

  CallChecker& buffers(ConstBufferView input, BufferView output) {
    comm_.check_buffer(input.data, input.count, input.memory, args_.label, "input");
    comm_.check_buffer(output.data, output.count, output.memory, args_.label, "output");
    comm_.check_extent(input.count, input.type, args_.label, "input");
    comm_.check_extent(output.count, output.type, args_.label, "output");
    if (input.memory != output.memory) [[unlikely]] {
      fail(fmt::format("input is {} memory but output is {} memory; both must be in the same memory",
                       to_string(input.memory), to_string(output.memory)));
    }
    if (input.type != output.type) [[unlikely]] {
      fail(fmt::format("input is {} but output is {}; both must have the same type", to_string(input.type),
                       to_string(output.type)));
    }
    args_.input = input;
    args_.output = output;
    return *this;
  }

  CallChecker& count(const char* what, std::size_t actual, std::size_t expected, const char* rule) {
    if (actual != expected) [[unlikely]] fail(fmt::format("{} is {} but must be {} ({})", what, actual, expected, rule));
    return *this;
  }

  /// `actual` must be `base` times the communicator size, a product that must not wrap.
  CallChecker& count_times_size(const char* what, std::size_t actual, const char* base_name, std::size_t base) {
    std::size_t expected = 0;
    if (__builtin_mul_overflow(base, static_cast<std::size_t>(comm_.size()), &expected)) [[unlikely]] {
      fail(fmt::format("{} = {} times the communicator size {} is more elements than a buffer can hold", base_name,
                       base, comm_.size()));
    }
    if (actual != expected) [[unlikely]] {
      fail(fmt::format("{} is {} but must be {} ({} times the communicator size)", what, actual, expected, base_name));
    }
    return *this;
  }

  /// In place exactly when `input` starts at `in_place_at`; any other overlap is an error.
  CallChecker& place(const void* in_place_at, const char* rule) {
    args_.in_place = args_.input.data == in_place_at && args_.input.count > 0;
    if (!args_.in_place && overlaps(args_.input.data, args_.input.bytes(), args_.output.data, args_.output.bytes()))
        [[unlikely]] {
      fail(fmt::format("input and output overlap, which is only allowed in place ({})", rule));
    }
    return *this;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorCode::invalid_argument, message, comm_.context(args_.label));
  }

  CollectiveArgs& args() { return args_; }

  Work start(std::string_view algorithm, StreamRef stream) {
    args_.stream = stream;
    return comm_.collectives().start(comm_, args_, algorithm);
  }

 private:
  CommunicatorImpl& comm_;
  CollectiveArgs args_;
};

const void* block_at(const void* base, int rank, std::size_t block_bytes) {
  return static_cast<const std::byte*>(base) + static_cast<std::size_t>(rank) * block_bytes;
}

}  // namespace

MESHCOMM_HOT Work Communicator::all_gather(ConstBufferView input, BufferView output, const CollectiveOptions& options,
                                           std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::all_gather, where);
  call.buffers(input, output)
      .count_times_size("output.count", output.count, "input.count", input.count)
      .place(block_at(output.data, impl_->rank(), input.bytes()), "input at this rank's block of output");
  return call.start(options.algorithm, options.stream);
}

MESHCOMM_HOT Work Communicator::reduce_scatter(ConstBufferView input, BufferView output, const ReduceOptions& options,
                                               std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::reduce_scatter, where);
  call.buffers(input, output)
      .count_times_size("input.count", input.count, "output.count", output.count);
  call.args().in_place = output.data == block_at(input.data, impl_->rank(), output.bytes()) && output.count > 0;
  if (!call.args().in_place && overlaps(input.data, input.bytes(), output.data, output.bytes())) {
    call.fail("input and output overlap, which is only allowed in place (output at this rank's block of input)");
  }
  call.args().op = options.op;
  return call.start(options.algorithm, options.stream);
}

MESHCOMM_HOT Work Communicator::all_reduce(ConstBufferView input, BufferView output, const ReduceOptions& options,
                                           std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::all_reduce, where);
  call.buffers(input, output)
      .count("output.count", output.count, input.count, "the same as input.count")
      .place(output.data, "the same memory");
  call.args().op = options.op;
  return call.start(options.algorithm, options.stream);
}

MESHCOMM_HOT Work Communicator::all_to_all(ConstBufferView input, BufferView output, const CollectiveOptions& options,
                                           std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::all_to_all, where);
  call.buffers(input, output)
      .count("output.count", output.count, input.count, "the same as input.count")
      .place(output.data, "the same memory");
  if (input.count % impl_->size() != 0) {
    call.fail(fmt::format("input.count = {} is not divisible by the communicator size {}; use all_to_allv for "
                          "uneven blocks",
                          input.count, impl_->size()));
  }
  return call.start(options.algorithm, options.stream);
}

MESHCOMM_HOT Work Communicator::all_to_allv(ConstBufferView input, BufferView output, const AllToAllvLayout& layout,
                                            const CollectiveOptions& options, std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::all_to_allv, where);
  call.buffers(input, output);
  const auto ranks = static_cast<std::size_t>(impl_->size());
  auto check_spans = [&](const char* name, std::span<const std::size_t> counts, std::span<const std::size_t> offsets,
                         std::size_t capacity) {
    if (counts.size() != ranks || offsets.size() != ranks) {
      call.fail(fmt::format("layout.{}_counts and layout.{}_offsets have {} and {} entries but need one per rank ({})",
                            name, name, counts.size(), offsets.size(), ranks));
    }
    for (std::size_t peer = 0; peer < ranks; ++peer) {
      // Compared without the sum, which could wrap.
      if (counts[peer] > capacity || offsets[peer] > capacity - counts[peer]) {
        call.fail(fmt::format("layout.{}_offsets[{}] = {} + layout.{}_counts[{}] = {} is past the end of the {} "
                              "buffer ({} elements)",
                              name, peer, offsets[peer], name, peer, counts[peer],
                              name[0] == 's' ? "input" : "output", capacity));
      }
    }
  };
  check_spans("send", layout.send_counts, layout.send_offsets, input.count);
  check_spans("recv", layout.recv_counts, layout.recv_offsets, output.count);
  if (overlaps(input.data, input.bytes(), output.data, output.bytes())) {
    call.fail("input and output overlap; all_to_allv is never in place");
  }
  call.args().layout = layout;
  return call.start(options.algorithm, options.stream);
}

MESHCOMM_HOT Work Communicator::broadcast(BufferView data, const BroadcastOptions& options, std::source_location where) {
  CallChecker call(*impl_, CollectiveKind::broadcast, where);
  call.buffers(data, data);
  if (options.root < 0 || options.root >= impl_->size()) {
    call.fail(fmt::format("root = {} is not a rank of this communicator; valid roots are 0..{}", options.root,
                          impl_->size() - 1));
  }
  call.args().root = options.root;
  call.args().in_place = true;
  return call.start(options.algorithm, options.stream);
}

std::vector<std::string_view> Communicator::algorithms(CollectiveKind kind) const {
  return impl_->collectives().names(kind);
}

}  // namespace meshcomm
