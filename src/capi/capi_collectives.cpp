#include <limits>
#include <span>

#include "capi_support.hpp"

using namespace meshcomm::capi;

namespace {

/// What every call of this file checks first: the communicator, its options, the element type.
struct Call {
  meshcommComm& handle;
  meshcomm::DataType type;
  meshcomm::MemoryKind memory;
  meshcomm::StreamRef stream;
  std::string_view algorithm;
  meshcommWork_t& work;
  const char* function;

  [[nodiscard]] meshcomm::Communicator& comm() const { return *handle.comm; }
  [[nodiscard]] meshcomm::ConstBufferView input(const void* data, std::size_t count) const {
    return {data, count, type, memory};
  }
  [[nodiscard]] meshcomm::BufferView output(void* data, std::size_t count) const { return {data, count, type, memory}; }
  /// `count` blocks of `block` elements, refused if that overflows.
  [[nodiscard]] std::size_t blocks(std::size_t block, const char* argument) const {
    const auto ranks = static_cast<std::size_t>(comm().size());
    if (block > std::numeric_limits<std::size_t>::max() / ranks / 8) {
      throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                            fmt::format("{}: {} = {} times {} ranks does not fit in memory", function, argument, block,
                                        ranks),
                            {.operation = function});
    }
    return block * ranks;
  }
  void finish(meshcomm::Work started) const { work = wrap_work(std::move(started), handle.last_error); }
};

Call begin(meshcommComm_t comm, meshcommDataType_t type, const meshcommCallOptions_t* options, meshcommWork_t* work,
           const char* function) {
  auto& handle = checked(comm, HandleMagic::comm, "comm", function);
  auto& result = output(work, "work", function);
  const meshcommCallOptions_t defaults = MESHCOMM_CALL_OPTIONS_INITIALIZER;
  const auto given = read_config(options, defaults, "options", "MESHCOMM_CALL_OPTIONS_INITIALIZER", function);
  return {.handle = handle,
          .type = data_type(type, function),
          .memory = memory_kind(given.memory, function),
          .stream = meshcomm::StreamRef(given.stream),
          .algorithm = given.algorithm != nullptr ? std::string_view(given.algorithm) : std::string_view{},
          .work = result,
          .function = function};
}

meshcomm::ReduceOp reduce_op(meshcommRedOp_t op, const char* function) {
  return checked_enum<meshcomm::ReduceOp>(op, meshcommAvg + 1, "op", function);
}

}  // namespace

extern "C" {

meshcommResult_t meshcommIsend(meshcommComm_t comm, const void* data, size_t count, meshcommDataType_t type, int peer,
                               int tag, const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommIsend");
    call.finish(call.comm().isend(call.input(data, count), peer, tag, call.stream));
  });
}

meshcommResult_t meshcommIrecv(meshcommComm_t comm, void* data, size_t count, meshcommDataType_t type, int peer,
                               int tag, const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommIrecv");
    call.finish(call.comm().irecv(call.output(data, count), peer, tag, call.stream));
  });
}

meshcommResult_t meshcommIbarrier(meshcommComm_t comm, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, meshcommUint8, nullptr, work, "meshcommIbarrier");
    call.finish(call.comm().ibarrier());
  });
}

meshcommResult_t meshcommAllGather(meshcommComm_t comm, const void* send, void* recv, size_t sendcount,
                                   meshcommDataType_t type, const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommAllGather");
    call.finish(call.comm().all_gather(call.input(send, sendcount), call.output(recv, call.blocks(sendcount, "sendcount")),
                                       {.algorithm = call.algorithm, .stream = call.stream}));
  });
}

meshcommResult_t meshcommReduceScatter(meshcommComm_t comm, const void* send, void* recv, size_t recvcount,
                                       meshcommDataType_t type, meshcommRedOp_t op,
                                       const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommReduceScatter");
    call.finish(call.comm().reduce_scatter(
        call.input(send, call.blocks(recvcount, "recvcount")), call.output(recv, recvcount),
        {.op = reduce_op(op, call.function), .algorithm = call.algorithm, .stream = call.stream}));
  });
}

meshcommResult_t meshcommAllReduce(meshcommComm_t comm, const void* send, void* recv, size_t count,
                                   meshcommDataType_t type, meshcommRedOp_t op, const meshcommCallOptions_t* options,
                                   meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommAllReduce");
    call.finish(call.comm().all_reduce(call.input(send, count), call.output(recv, count),
                                       {.op = reduce_op(op, call.function), .algorithm = call.algorithm,
                                        .stream = call.stream}));
  });
}

meshcommResult_t meshcommAllToAll(meshcommComm_t comm, const void* send, void* recv, size_t count,
                                  meshcommDataType_t type, const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommAllToAll");
    const auto total = call.blocks(count, "count");
    call.finish(call.comm().all_to_all(call.input(send, total), call.output(recv, total),
                                       {.algorithm = call.algorithm, .stream = call.stream}));
  });
}

meshcommResult_t meshcommAllToAllv(meshcommComm_t comm, const void* send, const size_t* send_counts,
                                   const size_t* send_offsets, void* recv, const size_t* recv_counts,
                                   const size_t* recv_offsets, meshcommDataType_t type,
                                   const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommAllToAllv");
    const auto ranks = static_cast<std::size_t>(call.comm().size());
    const size_t* arrays[] = {send_counts, send_offsets, recv_counts, recv_offsets};
    const char* names[] = {"send_counts", "send_offsets", "recv_counts", "recv_offsets"};
    for (std::size_t index = 0; index < 4; ++index) {
      if (arrays[index] == nullptr) {
        throw meshcomm::Error(meshcomm::ErrorCode::invalid_argument,
                              fmt::format("meshcommAllToAllv: {} is NULL; give {} entries", names[index], ranks),
                              {.operation = "meshcommAllToAllv"});
      }
    }
    // Each buffer's extent: the furthest block it holds.
    auto extent = [&](const size_t* counts, const size_t* offsets) {
      std::size_t end = 0;
      for (std::size_t peer = 0; peer < ranks; ++peer) end = std::max(end, offsets[peer] + counts[peer]);
      return end;
    };
    const meshcomm::AllToAllvLayout layout{.send_counts = std::span(send_counts, ranks),
                                           .send_offsets = std::span(send_offsets, ranks),
                                           .recv_counts = std::span(recv_counts, ranks),
                                           .recv_offsets = std::span(recv_offsets, ranks)};
    call.finish(call.comm().all_to_allv(call.input(send, extent(send_counts, send_offsets)),
                                        call.output(recv, extent(recv_counts, recv_offsets)), layout,
                                        {.algorithm = call.algorithm, .stream = call.stream}));
  });
}

meshcommResult_t meshcommBroadcast(meshcommComm_t comm, void* data, size_t count, meshcommDataType_t type, int root,
                                   const meshcommCallOptions_t* options, meshcommWork_t* work) {
  return guarded(slot_of(comm, HandleMagic::comm), [&] {
    const auto call = begin(comm, type, options, work, "meshcommBroadcast");
    call.finish(call.comm().broadcast(call.output(data, count),
                                      {.root = root, .algorithm = call.algorithm, .stream = call.stream}));
  });
}

}  // extern "C"
