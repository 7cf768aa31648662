#include "meshcomm/halo.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "communicator_impl.hpp"
#include "collective_engine.hpp"
#include "halo_ipc.hpp"
#include "halo_layout.hpp"
#include "halo_description.hpp"
#include "halo_rma.hpp"
#include "internal_p2p.hpp"
#include "meshcomm/communicator.hpp"
#include "recycled_allocation.hpp"
#include "row_table.hpp"
#include "setup_exchange.hpp"

namespace meshcomm {

std::string_view to_string(HaloStrategy strategy) noexcept {
  switch (strategy) {
    case HaloStrategy::p2p: return "p2p";
    case HaloStrategy::neighbor_alltoallv: return "neighbor_alltoallv";
    case HaloStrategy::mpi_neighbor: return "mpi_neighbor";
    case HaloStrategy::rma: return "rma";
  }
  return "unknown";
}

namespace detail {

/// How rows sit in the extended buffer.
struct HaloRowFormat {
  std::size_t row_elements;
  DataType type;
  std::size_t row_bytes;
  std::size_t stride_bytes;
  MemoryKind memory;
};

/// One direction of the exchange (forward, or the adjoint with the roles swapped): the messages
/// out and in, each ordered by (peer, slot) so that both sides of every pair agree on the order.
struct HaloDirection {
  std::vector<const HaloMessage*> out;
  std::vector<const HaloMessage*> in;
  std::vector<std::size_t> out_offset;  // byte offset of each message in the packed buffers
  std::vector<std::size_t> in_offset;
  std::size_t out_bytes = 0;
  std::size_t in_bytes = 0;
  RowTable pack;    // own rows into the packed outgoing buffer
  RowTable unpack;  // the packed incoming buffer into rows (forward: copied; adjoint: added)
  RowTable unpack_scattered;  // rma, forward: the messages that cannot land straight in their rows
  std::vector<RowTable> unpack_each;  // rma, adjoint: each message's rows, from wherever they arrived
  std::unique_ptr<NeighborGraph> graph;  // mpi_neighbor only
  std::vector<int> edge_counts[4];       // mpi_neighbor: send counts, offsets, recv counts, offsets
};

namespace {

std::vector<const HaloMessage*> ordered(const std::vector<HaloMessage>& messages) {
  std::vector<const HaloMessage*> result;
  for (const auto& message : messages) result.push_back(&message);
  std::sort(result.begin(), result.end(), [](const HaloMessage* a, const HaloMessage* b) {
    return a->peer != b->peer ? a->peer < b->peer : a->slot < b->slot;
  });
  return result;
}

}  // namespace

/// The state behind a HaloPlan.
class HaloPlanImpl {
 public:
  HaloPlanImpl(CommunicatorImpl& comm, HaloExchangeLayout layout, HaloRowFormat format, HaloStrategy strategy,
               std::size_t extended_rows, std::size_t own_first, int tag_slots)
      : comm_(comm),
        layout_(std::move(layout)),
        format_(format),
        strategy_(strategy),
        extended_rows_(extended_rows),
        own_first_(own_first),
        tag_slots_(tag_slots),
        // The mpi backend moves host memory only: CUDA buffers go through CUDA IPC.
        through_ipc_(format.memory == MemoryKind::cuda && comm.backend().kind() == BackendKind::mpi) {
    prepare(forward_, layout_.sends, layout_.receives, false);
    prepare(adjoint_, layout_.receives, layout_.sends, true);
    if (through_ipc_) open_ipc();
    if (strategy_ == HaloStrategy::rma) {
      for (bool adjoint : {false, true}) return_inbox(adjoint, take_inbox(adjoint));  // mapped before the first start
    }
    std::vector<device::RowPair> forward_local;
    std::vector<device::RowPair> adjoint_local;
    for (const auto& copy : layout_.local) {
      forward_local.push_back({copy.to, copy.from});
      adjoint_local.push_back({copy.from, copy.to});
    }
    local_forward_ = RowTable(std::move(forward_local), format_.memory);
    local_adjoint_ = RowTable(std::move(adjoint_local), format_.memory);
  }

  Work start(void* extended, bool adjoint, StreamRef stream) {
    if (through_ipc_) return start_ipc(extended, adjoint, stream);
    if (strategy_ == HaloStrategy::rma) return start_rma(extended, adjoint);
    const auto label = comm_.begin(adjoint ? "halo adjoint" : "halo");
    comm_.check_buffer(extended, extended_rows_, format_.memory, label, "extended");
    comm_.order_after_stream(format_.memory, stream);
    auto& direction = adjoint ? adjoint_ : forward_;
    auto* base = static_cast<std::byte*>(extended);
    auto scratch = comm_.scratch().acquire(direction.out_bytes + direction.in_bytes, format_.memory);
    std::byte* packed_out = scratch.get();
    std::byte* packed_in = scratch.get() + direction.out_bytes;
    const int first_tag = strategy_ == HaloStrategy::p2p ? comm_.reserve_internal_tags(tag_slots_) : 0;
    auto* self = this;
    return comm_.make_work(make_schedule(
        2, [self, &direction, base, packed_out, packed_in, scratch, adjoint, label, first_tag](int step) {
          if (step == 0) return self->post(direction, base, packed_out, packed_in, adjoint, label, first_tag);
          self->finish(direction, base, packed_in, adjoint);
          return WorkList{};
        }));
  }

  [[nodiscard]] std::size_t extended_rows() const noexcept { return extended_rows_; }
  [[nodiscard]] std::size_t own_first_row() const noexcept { return own_first_; }
  [[nodiscard]] std::size_t bytes_sent() const noexcept { return forward_.out_bytes; }
  [[nodiscard]] HaloStrategy strategy() const noexcept { return strategy_; }
  [[nodiscard]] std::string describe() const {
    return describe_halo_plan({.strategy = strategy_,
                               .backend = comm_.backend().kind(),
                               .memory = format_.memory,
                               .through_ipc = through_ipc_,
                               .ranks = comm_.size(),
                               .rank = comm_.rank(),
                               .send_peers = forward_.out.size(),
                               .receive_peers = forward_.in.size(),
                               .bytes_sent = forward_.out_bytes,
                               .bytes_received = forward_.in_bytes},
                              rma_paths_);
  }

 private:
  void prepare(HaloDirection& direction, const std::vector<HaloMessage>& out, const std::vector<HaloMessage>& in,
               bool adjoint) {
    direction.out = ordered(out);
    direction.in = ordered(in);
    std::vector<device::RowPair> pack;
    std::vector<device::RowPair> unpack;
    std::vector<device::RowPair> unpack_scattered;
    for (const auto* message : direction.out) {
      direction.out_offset.push_back(direction.out_bytes);
      // p2p sends a dense message straight from its rows; everything else goes through the pack
      // (through CUDA IPC everything: receivers read the outbox).
      if (through_ipc_ || !sends_from_rows() || !dense(*message)) {
        for (std::size_t r = 0; r < message->rows.size(); ++r) {
          pack.push_back({direction.out_bytes / format_.row_bytes + r, message->rows[r]});
        }
      }
      direction.out_bytes += message->rows.size() * format_.row_bytes;
    }
    for (const auto* message : direction.in) {
      direction.in_offset.push_back(direction.in_bytes);
      // p2p receives a dense forward message straight into its rows.
      const bool lands_in_rows = !adjoint && dense(*message);
      for (std::size_t r = 0; r < message->rows.size(); ++r) {
        const device::RowPair pair{message->rows[r], direction.in_bytes / format_.row_bytes + r};
        // rma chooses per exchange: straight into the rows of a mapped buffer, or all through the inbox.
        if (strategy_ != HaloStrategy::p2p || !lands_in_rows) unpack.push_back(pair);
        if (strategy_ == HaloStrategy::rma && !lands_in_rows) unpack_scattered.push_back(pair);
      }
      direction.in_bytes += message->rows.size() * format_.row_bytes;
    }
    direction.pack = RowTable(std::move(pack), format_.memory);
    direction.unpack = RowTable(std::move(unpack), format_.memory);
    direction.unpack_scattered = RowTable(std::move(unpack_scattered), format_.memory);
    if (strategy_ == HaloStrategy::rma && adjoint) {
      for (const auto* message : direction.in) {
        std::vector<device::RowPair> pairs;
        for (std::size_t r = 0; r < message->rows.size(); ++r) pairs.push_back({message->rows[r], r});
        direction.unpack_each.emplace_back(std::move(pairs), format_.memory);
      }
    }
    if (strategy_ != HaloStrategy::mpi_neighbor) return;
    std::vector<int> sources;
    std::vector<int> destinations;
    for (const auto* message : direction.in) sources.push_back(message->peer);
    for (const auto* message : direction.out) destinations.push_back(message->peer);
    direction.graph = comm_.backend().create_neighbor_graph(sources, destinations);
    for (std::size_t i = 0; i < direction.out.size(); ++i) {
      direction.edge_counts[0].push_back(static_cast<int>(direction.out[i]->rows.size() * format_.row_bytes));
      direction.edge_counts[1].push_back(static_cast<int>(direction.out_offset[i]));
    }
    for (std::size_t i = 0; i < direction.in.size(); ++i) {
      direction.edge_counts[2].push_back(static_cast<int>(direction.in[i]->rows.size() * format_.row_bytes));
      direction.edge_counts[3].push_back(static_cast<int>(direction.in_offset[i]));
    }
  }

  [[nodiscard]] std::byte* row(std::byte* base, std::size_t index) const { return base + index * format_.stride_bytes; }

  /// Whether dense outgoing messages leave straight from their rows (no pack).
  [[nodiscard]] bool sends_from_rows() const noexcept {
    return strategy_ == HaloStrategy::p2p || strategy_ == HaloStrategy::rma;
  }

  /// Mapped memory the neighbours put one exchange's messages into (for those that do not land
  /// in their rows): one per exchange in flight, so that one plan can run several at once.
  std::shared_ptr<SharedSegment> take_inbox(bool adjoint) {
    auto& free = idle_inboxes_[adjoint ? 1 : 0];
    std::lock_guard lock(inbox_mutex_);
    const std::size_t bytes = std::max<std::size_t>((adjoint ? adjoint_ : forward_).in_bytes, 1);
    if (free.empty()) return comm_.shared_memory().create(bytes);
    auto inbox = std::move(free.back());
    free.pop_back();
    return inbox;
  }
  void return_inbox(bool adjoint, std::shared_ptr<SharedSegment> inbox) {
    std::lock_guard lock(inbox_mutex_);
    idle_inboxes_[adjoint ? 1 : 0].push_back(std::move(inbox));
  }

  /// An rma exchange: the receivers' credits say where each message lands (its rows, where the
  /// extended buffer is mapped memory and the rows one block, else the inbox), puts, notifications.
  Work start_rma(void* extended, bool adjoint) {
    const auto label = comm_.begin(adjoint ? "halo adjoint" : "halo");
    comm_.check_buffer(extended, extended_rows_, format_.memory, label, "extended");
    auto& direction = adjoint ? adjoint_ : forward_;
    auto* base = static_cast<std::byte*>(extended);
    copy_local(base, adjoint);
    auto packed = comm_.scratch().acquire(direction.out_bytes, format_.memory);
    direction.pack.copy(packed.get(), format_.row_bytes, base, format_.stride_bytes, format_.row_bytes);
    // The adjoint offers its rows to same-host owners to add straight from this rank's memory.
    const std::size_t extended_bytes = extended_rows_ * format_.stride_bytes;
    const auto offered = adjoint ? comm_.shared_memory().locate(base, extended_bytes) : std::nullopt;
    std::vector<RmaOutgoing> out;
    bool any_offered = false;
    for (std::size_t i = 0; i < direction.out.size(); ++i) {
      const auto& message = *direction.out[i];
      const bool from_rows = dense(message) && !message.rows.empty();
      RmaOutgoing outgoing{message.peer, message.slot,
                           from_rows ? row(base, message.rows.front()) : packed.get() + direction.out_offset[i],
                           message.rows.size() * format_.row_bytes};
      if (offered && from_rows && comm_.backend().shares_memory_with(message.peer)) {
        outgoing.pull_handle = offered->handle;
        outgoing.pull_offset = offered->offset + message.rows.front() * format_.stride_bytes;
        any_offered = true;
      }
      out.push_back(std::move(outgoing));
    }
    const auto mapped = adjoint ? std::nullopt : comm_.shared_memory().locate(base, extended_bytes);
    if (adjoint) {
      (any_offered ? rma_paths_.adjoint_offered : rma_paths_.adjoint_put) += 1;
    } else {
      (mapped ? rma_paths_.forward_into_rows : rma_paths_.forward_through_inbox) += 1;
    }
    auto inbox = take_inbox(adjoint);
    std::vector<RmaIncoming> in;
    for (std::size_t i = 0; i < direction.in.size(); ++i) {
      const auto& message = *direction.in[i];
      const std::size_t bytes = message.rows.size() * format_.row_bytes;
      if (mapped && dense(message) && !message.rows.empty()) {
        in.push_back({message.peer, message.slot, bytes, mapped->handle,
                      mapped->offset + message.rows.front() * format_.stride_bytes});
      } else {
        in.push_back({message.peer, message.slot, bytes, inbox->handle(), direction.in_offset[i]});
      }
    }
    const int first_tag = comm_.reserve_internal_tags(3 * tag_slots_);
    auto* self = this;
    const bool straight = mapped.has_value();
    auto consume = [self, packed, inbox, &direction, base, adjoint, straight](const std::vector<RmaArrival>& arrivals) {
      const auto* received = inbox->base();
      const auto& format = self->format_;
      if (adjoint) {
        for (std::size_t i = 0; i < arrivals.size(); ++i) {
          const std::byte* rows = arrivals[i].pulled
                                      ? self->comm_.shared_memory().map_peer(arrivals[i].handle) + arrivals[i].offset
                                      : received + direction.in_offset[i];
          direction.unpack_each[i].add(base, format.stride_bytes, rows, format.row_bytes, format.row_elements,
                                       format.type);
        }
      } else if (straight) {
        direction.unpack_scattered.copy(base, format.stride_bytes, received, format.row_bytes, format.row_bytes);
      } else {
        self->finish(direction, base, received, adjoint);
      }
    };
    auto exchange = start_rma_exchange(comm_, std::move(out), std::move(in), first_tag, tag_slots_, label,
                                       std::move(consume));
    return comm_.make_work(make_schedule(
        2, [self, exchange = std::move(exchange), inbox, adjoint](int step) {
          WorkList works;
          if (step == 0) {
            works.push_back(self->comm_.make_work(exchange));
          } else {
            self->return_inbox(adjoint, inbox);
          }
          return works;
        }));
  }

  /// Where incoming message `index` lands: straight in its rows when they are one dense block
  /// (forward p2p), else in the packed buffer for the unpack.
  [[nodiscard]] std::byte* incoming_target(const HaloDirection& direction, std::size_t index, std::byte* base,
                                           std::byte* packed_in, bool adjoint) const {
    const auto& message = *direction.in[index];
    return !adjoint && dense(message) ? row(base, message.rows.front()) : packed_in + direction.in_offset[index];
  }

  /// True when the message's rows are one dense block of the extended buffer.
  [[nodiscard]] bool dense(const HaloMessage& message) const {
    if (format_.stride_bytes != format_.row_bytes) return false;
    for (std::size_t i = 1; i < message.rows.size(); ++i) {
      if (message.rows[i] != message.rows[0] + i) return false;
    }
    return true;
  }

  /// Step 0: local rows, packing, and the transfers.
  WorkList post(HaloDirection& direction, std::byte* base, std::byte* packed_out, std::byte* packed_in,
                         bool adjoint, OperationLabel label, int first_tag) {
    copy_local(base, adjoint);
    direction.pack.copy(packed_out, format_.row_bytes, base, format_.stride_bytes, format_.row_bytes);
    WorkList works;
    if (strategy_ == HaloStrategy::p2p) {
      for (std::size_t i = 0; i < direction.in.size(); ++i) {
        const auto& message = *direction.in[i];
        works.push_back(recv_bytes(comm_, incoming_target(direction, i, base, packed_in, adjoint),
                                   message.rows.size() * format_.row_bytes, message.peer, first_tag + message.slot,
                                   label, format_.memory));
      }
      for (std::size_t i = 0; i < direction.out.size(); ++i) {
        const auto& message = *direction.out[i];
        const void* source = dense(message) ? static_cast<const void*>(row(base, message.rows.empty() ? 0 : message.rows.front()))
                                            : packed_out + direction.out_offset[i];
        works.push_back(send_bytes(comm_, source, message.rows.size() * format_.row_bytes, message.peer,
                                   first_tag + message.slot, label, format_.memory));
      }
      return works;
    }
    if (strategy_ == HaloStrategy::mpi_neighbor) {
      works.push_back(comm_.make_work(direction.graph->start(packed_out, direction.edge_counts[0],
                                                             direction.edge_counts[1], packed_in,
                                                             direction.edge_counts[2], direction.edge_counts[3])));
      return works;
    }
    // neighbor_alltoallv: one all-to-allv over the whole communicator, zero counts off the neighbours.
    const auto ranks = static_cast<std::size_t>(comm_.size());
    counts_.assign(4 * ranks, 0);
    auto per_peer = [&](const std::vector<const HaloMessage*>& messages, const std::vector<std::size_t>& offsets,
                        std::size_t* counts, std::size_t* displacements) {
      for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto peer = static_cast<std::size_t>(messages[i]->peer);
        if (counts[peer] == 0) displacements[peer] = offsets[i];
        counts[peer] += messages[i]->rows.size() * format_.row_bytes;
      }
    };
    per_peer(direction.out, direction.out_offset, counts_.data(), counts_.data() + ranks);
    per_peer(direction.in, direction.in_offset, counts_.data() + 2 * ranks, counts_.data() + 3 * ranks);
    const std::span<const std::size_t> all(counts_);
    CollectiveArgs args;
    args.kind = CollectiveKind::all_to_allv;
    args.input = ConstBufferView(packed_out, direction.out_bytes, DataType::u8, format_.memory);
    args.output = BufferView(packed_in, direction.in_bytes, DataType::u8, format_.memory);
    args.layout = {all.subspan(0, ranks), all.subspan(ranks, ranks), all.subspan(2 * ranks, ranks),
                   all.subspan(3 * ranks, ranks)};
    args.label = label;
    works.push_back(comm_.collectives().start(comm_, args, {}));
    return works;
  }

  /// Collective: the outboxes and where every incoming message sits in its sender's.
  void open_ipc() {
    if (strategy_ != HaloStrategy::p2p) {
      throw Error(ErrorCode::unsupported,
                  fmt::format("strategy {} on cuda memory needs a backend that moves it (inproc or nccl); on mpi, "
                              "CUDA memory moves through CUDA IPC with strategy p2p",
                              to_string(strategy_)),
                  {.operation = "HaloPlan::create"});
    }
    const auto label = comm_.begin("HaloPlan::create");
    std::array<IpcDirectionLayout, 2> layouts;
    for (int d = 0; d < 2; ++d) {
      const auto& direction = d == 0 ? forward_ : adjoint_;
      for (std::size_t i = 0; i < direction.out.size(); ++i) {
        layouts[d].out.push_back({direction.out[i]->peer, direction.out[i]->slot, direction.out_offset[i],
                                  direction.out[i]->rows.size() * format_.row_bytes});
      }
      for (std::size_t i = 0; i < direction.in.size(); ++i) {
        layouts[d].in.push_back({direction.in[i]->peer, direction.in[i]->slot, direction.in_offset[i],
                                 direction.in[i]->rows.size() * format_.row_bytes});
      }
      layouts[d].out_bytes = direction.out_bytes;
    }
    ipc_ = make_halo_ipc(comm_, layouts, comm_.reserve_internal_tags(2 * tag_slots_), tag_slots_, label);
    ipc_received_[0] = comm_.scratch().acquire(std::max<std::size_t>(forward_.in_bytes, 1), MemoryKind::cuda);
    ipc_received_[1] = comm_.scratch().acquire(std::max<std::size_t>(adjoint_.in_bytes, 1), MemoryKind::cuda);
  }

  /// An exchange through CUDA IPC, ordered on `stream`: local rows and the pack go into the
  /// outbox, the other ranks' messages come straight out of theirs.
  Work start_ipc(void* extended, bool adjoint, StreamRef stream) {
    const auto label = comm_.begin(adjoint ? "halo adjoint" : "halo");
    if (auto problem = device::pointer_problem(extended); !problem.empty()) {
      throw Error(ErrorCode::invalid_argument, fmt::format("extended is not CUDA memory: {}", problem),
                  comm_.context(label));
    }
    auto& direction = adjoint ? adjoint_ : forward_;
    auto* base = static_cast<std::byte*>(extended);
    std::byte* received = ipc_received_[adjoint ? 1 : 0].get();
    constexpr auto queued = device::Completion::queued;
    const IpcRowWork rows{
        .pack =
            [&](std::byte* outbox) {
              copy_local(base, adjoint, stream, queued);
              direction.pack.copy(outbox, format_.row_bytes, base, format_.stride_bytes, format_.row_bytes, stream,
                                  queued);
            },
        .target = [&](std::size_t index) { return incoming_target(direction, index, base, received, adjoint); },
        .unpack = [&] { finish(direction, base, received, adjoint, stream, queued); }};
    return ipc_->exchange(adjoint ? 1 : 0, stream, rows, label);
  }

  /// A rank's own rows that its halo repeats (periodic halos on small rings).
  void copy_local(std::byte* base, bool adjoint, StreamRef stream = {},
                  device::Completion completion = device::Completion::on_return) const {
    if (adjoint) {
      local_adjoint_.add(base, format_.stride_bytes, base, format_.stride_bytes, format_.row_elements, format_.type,
                         stream, completion);
    } else {
      local_forward_.copy(base, format_.stride_bytes, base, format_.stride_bytes, format_.row_bytes, stream,
                          completion);
    }
  }

  /// Step 1: received rows into place (forward) or added onto their owners' rows (adjoint).
  void finish(HaloDirection& direction, std::byte* base, const std::byte* packed_in, bool adjoint, StreamRef stream = {},
              device::Completion completion = device::Completion::on_return) const {
    if (adjoint) {
      direction.unpack.add(base, format_.stride_bytes, packed_in, format_.row_bytes, format_.row_elements, format_.type,
                           stream, completion);
    } else {
      direction.unpack.copy(base, format_.stride_bytes, packed_in, format_.row_bytes, format_.row_bytes, stream,
                            completion);
    }
  }

  CommunicatorImpl& comm_;
  HaloExchangeLayout layout_;
  HaloRowFormat format_;
  HaloStrategy strategy_;
  std::size_t extended_rows_;
  std::size_t own_first_;
  int tag_slots_;
  HaloDirection forward_;
  HaloDirection adjoint_;
  RowTable local_forward_;
  RowTable local_adjoint_;
  std::vector<std::size_t> counts_;
  bool through_ipc_;
  // rma: inboxes no exchange uses now, per direction.
  std::mutex inbox_mutex_;
  std::vector<std::shared_ptr<SharedSegment>> idle_inboxes_[2];
  RmaPathCounts rma_paths_;  // which way the rma starts moved their rows, for describe()
  // CUDA memory on mpi: messages not read straight into rows, per direction, and the transport
  // (declared last, so it is destroyed first: it waits for the device work on both).
  std::shared_ptr<std::byte[]> ipc_received_[2];
  std::unique_ptr<HaloIpc> ipc_;
};

namespace {

Error halo_error(const std::string& message) {
  return Error(ErrorCode::invalid_argument, message, {.operation = "HaloPlan::create"});
}

HaloRowFormat row_format(std::size_t row_elements, DataType type, std::size_t row_stride, MemoryKind memory) {
  if (row_elements == 0) throw halo_error("row_elements = 0; rows need at least one element");
  const std::size_t stride = row_stride == 0 ? row_elements : row_stride;
  if (stride < row_elements) {
    throw halo_error(fmt::format("row_stride = {} is smaller than row_elements = {}; rows would overlap", stride,
                                 row_elements));
  }
  return {row_elements, type, row_elements * size_of(type), stride * size_of(type), memory};
}

void check_strategy(const CommunicatorImpl& comm, HaloStrategy strategy, MemoryKind memory) {
  if (strategy == HaloStrategy::rma && (!comm.backend().puts() || memory != MemoryKind::host)) {
    throw Error(ErrorCode::unsupported,
                fmt::format("strategy rma puts host rows with the ucx backend's one-sided puts; this plan has the {} "
                            "backend and {} memory. Use p2p or neighbor_alltoallv",
                            to_string(comm.backend().kind()), to_string(memory)),
                {.operation = "HaloPlan::create"});
  }
  if (strategy == HaloStrategy::mpi_neighbor && comm.backend().kind() != BackendKind::mpi) {
    throw Error(ErrorCode::unsupported,
                fmt::format("strategy mpi_neighbor needs the mpi backend, not {}; use p2p or neighbor_alltoallv",
                            to_string(comm.backend().kind())),
                {.operation = "HaloPlan::create"});
  }
}

/// The fields every rank must agree on, compared field by field so that a mismatch is named.
struct Fingerprint {
  std::int64_t values[8];
};

void check_same_everywhere(CommunicatorImpl& comm, const Fingerprint& mine) {
  static constexpr const char* kNames[8] = {"shard_rows", "left", "right", "row_elements",
                                            "type",       "row_stride", "periodic", "strategy"};
  const auto label = comm.begin("HaloPlan::create");
  auto all = exchange_all_gather(comm, std::as_bytes(std::span(&mine, 1)), label);
  const auto* fingerprints = reinterpret_cast<const Fingerprint*>(all.data());
  for (int rank = 0; rank < comm.size(); ++rank) {
    for (int field = 0; field < 8; ++field) {
      if (fingerprints[rank].values[field] != mine.values[field]) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("the halo plan differs across ranks: {} is {} on rank {} but {} on rank {}; every "
                                "rank must pass the same spec",
                                kNames[field], mine.values[field], comm.rank(), fingerprints[rank].values[field], rank),
                    comm.context(label, rank));
      }
    }
  }
}

}  // namespace
}  // namespace detail

HaloPlan HaloPlan::create(Communicator& comm, const HaloSpec& spec) {
  auto& impl = comm.impl();
  using detail::halo_error;
  if (spec.shard_rows.size() != static_cast<std::size_t>(comm.size())) {
    throw halo_error(fmt::format("shard_rows has {} entries but the communicator has {} ranks; give one per rank",
                                 spec.shard_rows.size(), comm.size()));
  }
  const std::size_t total = std::accumulate(spec.shard_rows.begin(), spec.shard_rows.end(), std::size_t{0});
  for (auto [name, width] : {std::pair{"left", spec.left}, std::pair{"right", spec.right}}) {
    if (width < 0) throw halo_error(fmt::format("{} = {} is negative; halo widths are >= 0", name, width));
    if (static_cast<std::size_t>(width) > total) {
      throw halo_error(fmt::format("{} = {} is beyond the whole sequence of {} rows; widths are at most {}", name, width,
                                   total, total));
    }
  }
  const auto format = detail::row_format(spec.row_elements, spec.type, spec.row_stride, spec.memory);
  detail::check_strategy(impl, spec.strategy, spec.memory);
  std::size_t rows_hash = 1469598103934665603ULL;
  for (auto rows : spec.shard_rows) rows_hash = (rows_hash ^ rows) * 1099511628211ULL;
  detail::check_same_everywhere(
      impl, {{static_cast<std::int64_t>(rows_hash), spec.left, spec.right, static_cast<std::int64_t>(spec.row_elements),
              static_cast<std::int64_t>(spec.type), static_cast<std::int64_t>(format.stride_bytes), spec.periodic,
              static_cast<std::int64_t>(spec.strategy)}});
  const auto left = static_cast<std::size_t>(spec.left);
  const auto right = static_cast<std::size_t>(spec.right);
  auto layout = detail::halo_layout_1d(spec.shard_rows, comm.rank(), left, right, spec.periodic);
  // Slots: a side's halo has at most one run per rank, plus one where a periodic halo wraps.
  const int slots = 2 * comm.size() + 2;
  return HaloPlan(std::make_unique<detail::HaloPlanImpl>(impl, std::move(layout), format, spec.strategy,
                                                         left + spec.shard_rows[comm.rank()] + right, left, slots));
}

HaloPlan HaloPlan::create(Communicator& comm, const HaloGraphSpec& spec) {
  auto& impl = comm.impl();
  using detail::halo_error;
  if (spec.send_peers.size() != spec.send_rows.size() || spec.recv_peers.size() != spec.recv_rows.size()) {
    throw halo_error(fmt::format("send_peers/send_rows have {}/{} entries and recv_peers/recv_rows {}/{}; each pair "
                                 "must match",
                                 spec.send_peers.size(), spec.send_rows.size(), spec.recv_peers.size(),
                                 spec.recv_rows.size()));
  }
  const auto format = detail::row_format(spec.row_elements, spec.type, spec.row_stride, spec.memory);
  detail::check_strategy(impl, spec.strategy, spec.memory);
  detail::HaloExchangeLayout layout;
  auto check_peer = [&](int peer) {
    if (peer < 0 || peer >= comm.size() || peer == comm.rank()) {
      throw halo_error(fmt::format("peer {} is not another rank of this communicator (0..{}, not {})", peer,
                                   comm.size() - 1, comm.rank()));
    }
  };
  // The k-th message between two ranks in one direction takes slot k on both sides.
  std::vector<int> sent_to(comm.size(), 0);
  for (std::size_t i = 0; i < spec.send_peers.size(); ++i) {
    check_peer(spec.send_peers[i]);
    for (auto index : spec.send_rows[i]) {
      if (index >= spec.own_rows) {
        throw halo_error(fmt::format("send_rows[{}] names row {} but the rank owns {} rows", i, index, spec.own_rows));
      }
    }
    layout.sends.push_back({spec.send_peers[i], sent_to[spec.send_peers[i]]++, spec.send_rows[i]});
  }
  std::vector<int> received_from(comm.size(), 0);
  std::size_t next_row = spec.own_rows;
  for (std::size_t i = 0; i < spec.recv_peers.size(); ++i) {
    check_peer(spec.recv_peers[i]);
    std::vector<std::size_t> rows(spec.recv_rows[i]);
    std::iota(rows.begin(), rows.end(), next_row);
    next_row += spec.recv_rows[i];
    layout.receives.push_back({spec.recv_peers[i], received_from[spec.recv_peers[i]]++, std::move(rows)});
  }
  std::int64_t slots = 1;
  for (const auto& message : layout.sends) slots = std::max<std::int64_t>(slots, message.slot + 1);
  for (const auto& message : layout.receives) slots = std::max<std::int64_t>(slots, message.slot + 1);
  detail::check_same_everywhere(impl, {{0, 0, 0, static_cast<std::int64_t>(spec.row_elements),
                                        static_cast<std::int64_t>(spec.type), static_cast<std::int64_t>(format.stride_bytes),
                                        0, static_cast<std::int64_t>(spec.strategy)}});
  // Every rank must reserve the same number of tags per start: agree on the largest.
  const auto label = impl.begin("HaloPlan::create");
  const auto all = detail::exchange_all_gather(impl, std::as_bytes(std::span(&slots, 1)), label);
  const auto* every = reinterpret_cast<const std::int64_t*>(all.data());
  const auto agreed = *std::max_element(every, every + comm.size());
  return HaloPlan(std::make_unique<detail::HaloPlanImpl>(impl, std::move(layout), format, spec.strategy, next_row, 0,
                                                         static_cast<int>(agreed)));
}

HaloPlan::HaloPlan(std::unique_ptr<detail::HaloPlanImpl> impl) noexcept : impl_(std::move(impl)) {}
HaloPlan::HaloPlan(HaloPlan&&) noexcept = default;
HaloPlan& HaloPlan::operator=(HaloPlan&&) noexcept = default;
HaloPlan::~HaloPlan() = default;
std::size_t HaloPlan::extended_rows() const noexcept { return impl_->extended_rows(); }
std::size_t HaloPlan::own_first_row() const noexcept { return impl_->own_first_row(); }
std::size_t HaloPlan::bytes_sent() const noexcept { return impl_->bytes_sent(); }
HaloStrategy HaloPlan::strategy() const noexcept { return impl_->strategy(); }
std::string HaloPlan::describe() const { return impl_->describe(); }
Work HaloPlan::start(void* extended, StreamRef stream) { return impl_->start(extended, false, stream); }
Work HaloPlan::start_adjoint(void* extended_gradient, StreamRef stream) {
  return impl_->start(extended_gradient, true, stream);
}

}  // namespace meshcomm
