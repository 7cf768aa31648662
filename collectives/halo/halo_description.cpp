#include "halo_description.hpp"

#include <fmt/format.h>

namespace meshcomm::detail {

namespace {

std::string rma_paths(const RmaPathCounts& paths) {
  const auto into_rows = paths.forward_into_rows.load();
  const auto through_inbox = paths.forward_through_inbox.load();
  const auto offered = paths.adjoint_offered.load();
  const auto put = paths.adjoint_put.load();
  std::string text = fmt::format(
      "; forward starts so far: {} with the halo rows put straight into this rank's extended buffer (memory from "
      "Communicator::allocate_shared), {} through the plan's mapped inbox and copied from there",
      into_rows, through_inbox);
  if (through_inbox > 0) {
    text += " (a buffer not from allocate_shared: pass one from it to save the copy)";
  }
  text += fmt::format(
      "; adjoint starts so far: {} with the gradients offered for same-host owners to add from this rank's memory, {} "
      "with them put into the owners' inboxes",
      offered, put);
  return text;
}

}  // namespace

std::string describe_halo_plan(const HaloPlanFacts& facts, const RmaPathCounts& paths) {
  std::string text = fmt::format(
      "halo plan, rank {} of {}: strategy {} on the {} backend, {} memory{}; sends to {} peer(s), {} B, and receives "
      "from {} peer(s), {} B, per start",
      facts.rank, facts.ranks, to_string(facts.strategy), to_string(facts.backend), to_string(facts.memory),
      facts.through_ipc ? " (through CUDA IPC)" : "", facts.send_peers, facts.bytes_sent, facts.receive_peers,
      facts.bytes_received);
  if (facts.strategy == HaloStrategy::rma) text += rma_paths(paths);
  return text;
}

}  // namespace meshcomm::detail
