#include "mpi_operation.hpp"

#include <fmt/format.h>

#include "mpi_check.hpp"
#include "call_record.hpp"
#include "patterns/collective_tags.hpp"

namespace meshcomm::detail {

MpiOperation::~MpiOperation() {
  // A Work dropped before completion leaves its pieces to finish in the background, unless the
  // communicator is fatal (aborted): then they are withdrawn where MPI can.
  if (next_pending_ < pieces_ && fatal_->is_set()) (void)cancel_pending();
  for (std::size_t i = 0; i < pieces_; ++i) {
    if (piece(i).request != MPI_REQUEST_NULL) MPI_Request_free(&piece(i).request);
  }
}

void MpiOperation::add_piece(MPI_Request request, std::size_t piece_bytes) {
  if (pieces_ > 0) more_pieces_.push_back({request, piece_bytes});
  else first_piece_ = {request, piece_bytes};
  ++pieces_;
}

void MpiOperation::finish_piece(std::size_t index, const MPI_Status& status, int code) {
  const auto& d = description_;
  if (code == MPI_ERR_TRUNCATE || (code == MPI_ERR_IN_STATUS && status.MPI_ERROR == MPI_ERR_TRUNCATE)) {
    error_ = std::make_exception_ptr(message_too_large(d.site, d.tag, d.bytes));
    return;
  }
  if (code != MPI_SUCCESS) {
    auto context = d.site.context();
    context.native_code = code;
    error_ = std::make_exception_ptr(
        Error(ErrorCode::backend_failure, fmt::format("MPI_Test failed: {}", mpi_error_text(code)), context));
    return;
  }
  if (!d.is_send) {
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (static_cast<std::size_t>(received) != piece(index).bytes) {
      error_ = std::make_exception_ptr(message_of_other_size(
          d.site, d.tag, d.bytes - piece(index).bytes + static_cast<std::size_t>(received), d.bytes));
    }
  }
}

bool MpiOperation::test() {
  if (error_ == nullptr && next_pending_ < pieces_ && fatal_->is_set()) [[unlikely]] withdraw_after_fatal();
  while (error_ == nullptr && next_pending_ < pieces_) {
    int done = 0;
    MPI_Status status;
    const int code = MPI_Test(&piece(next_pending_).request, &done, &status);
    if (code == MPI_SUCCESS && done == 0) {
      look_at_peer();
      return false;
    }
    finish_piece(next_pending_, status, code);
    ++next_pending_;
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void MpiOperation::wait_until(Clock::time_point deadline) {
  if (poll_until([this] { return test(); }, deadline)) return;
  cancel_after_timeout(deadline);
  std::rethrow_exception(error_);
}

void MpiOperation::look_at_peer() {
  // Whoever polls this operation (a wait, a collective's schedule, a progress thread) polls often.
  const auto& d = description_;
  if (d.processes == nullptr || !liveness_.due()) return;
  fail_if_peer_called_another_shape();
  const auto ended = d.processes->ended(std::span(&d.peer, 1));
  if (ended.empty()) return;
  cancel_pending();
  const Error error = d.processes->failure(
      ended, d.site.context(),
      fmt::format("this {} (tag {}) can never complete; the communicator cannot be used again",
                  d.is_send ? fmt::format("send of {} bytes to it", d.bytes)
                            : fmt::format("receive of {} bytes from it", d.bytes),
                  d.tag));
  fatal_->set(error);
  error_ = std::make_exception_ptr(error);
  std::rethrow_exception(error_);
}

bool MpiOperation::cancel_pending() {
  bool all_withdrawn = true;
  const auto context = description_.site.context();
  for (std::size_t i = next_pending_; i < pieces_; ++i) {
    auto& request = piece(i).request;
    MPI_Cancel(&request);
    // A cancelled receive completes at once; a send MPI cannot cancel may never complete.
    MPI_Status status;
    if (!poll_request(request, status, deadline_after(std::chrono::milliseconds{50}), context)) {
      MPI_Request_free(&request);
      all_withdrawn = false;
    }
  }
  next_pending_ = pieces_;
  return all_withdrawn;
}

void MpiOperation::withdraw_after_fatal() {
  const auto& d = description_;
  const bool withdrawn = cancel_pending();
  error_ = std::make_exception_ptr(
      fatal_->aborted_error(d.site.context(), withdrawal_outcome(d.is_send, d.bytes, d.peer, withdrawn)));
}

void MpiOperation::cancel_after_timeout(Clock::time_point deadline) {
  const auto& d = description_;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started_).count();
  const bool stuck = !cancel_pending();
  const auto context = d.site.context();
  auto error = d.is_send ? Error(ErrorCode::timeout,
                                 fmt::format("send of {} bytes to peer {} (tag {}) was not received within {} ms: "
                                             "peer {} posted no matching receive",
                                             d.bytes, d.peer, d.tag, waited, d.peer),
                                 context)
                         : Error(ErrorCode::timeout,
                                 fmt::format("receive of {} bytes from peer {} (tag {}) got no message within {} ms: "
                                             "peer {} sent nothing with that tag",
                                             d.bytes, d.peer, d.tag, waited, d.peer),
                                 context);
  if (stuck) fatal_->set(error);
  error_ = std::make_exception_ptr(error);
}

void MpiOperation::fail_if_peer_called_another_shape() {
  const auto& d = description_;
  if (d.is_send || d.comm == MPI_COMM_NULL || !CollectiveTags::is_collective(d.tag)) return;
  int waiting = 0;
  MPI_Status status;
  // The peer's earliest message not yet received: after calls that all matched, the one of the
  // call this rank is stuck in.
  if (MPI_Iprobe(d.peer, MPI_ANY_TAG, d.comm, &waiting, &status) != MPI_SUCCESS || waiting == 0) return;
  if (!CollectiveTags::same_call_other_shape(d.tag, status.MPI_TAG)) return;
  int sent = 0;
  MPI_Get_count(&status, MPI_BYTE, &sent);
  cancel_pending();
  const Error error = disagreeing_call_error(d.site.context(), d.bytes, d.tag, static_cast<std::size_t>(sent),
                                             status.MPI_TAG);
  fatal_->set(error);
  error_ = std::make_exception_ptr(error);
  std::rethrow_exception(error_);
}

}  // namespace meshcomm::detail
