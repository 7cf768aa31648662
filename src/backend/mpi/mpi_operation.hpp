#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "../backend.hpp"
#include "process_liveness.hpp"

namespace meshcomm::detail {

/// One send or receive of the mpi backend: the MPI requests of its pieces (messages above
/// `kMpiMaxPiece` bytes travel as several pieces, since MPI counts are `int`).
class MpiOperation final : public WorkState {
 public:
  struct Description {
    bool is_send;
    int peer;
    int tag;
    std::size_t bytes;
    CallSite site;
    /// The ranks' processes (owned by the backend, which outlives its operations).
    const RankProcesses* processes = nullptr;
    /// The communicator it travels on, where a receive looks for its peer's other messages.
    MPI_Comm comm = MPI_COMM_NULL;
  };

  MpiOperation(Description description, std::shared_ptr<FatalState> fatal)
      : description_(std::move(description)), fatal_(std::move(fatal)) {}
  ~MpiOperation() override;

  /// Adds the request of one piece of `piece_bytes` bytes.
  void add_piece(MPI_Request request, std::size_t piece_bytes);

  bool test() override;
  void wait_until(Clock::time_point deadline) override;

 private:
  /// Records a completed piece's status; returns false on a failure (stored in error_).
  void finish_piece(std::size_t index, const MPI_Status& status, int code);
  void cancel_after_timeout(Clock::time_point deadline);
  /// Fails the operation with the communicator's fatal error (after an abort or another
  /// operation's fatal failure), withdrawing its pending pieces where MPI can.
  void withdraw_after_fatal();
  /// Cancels the pending pieces, waiting briefly for each; false if MPI could not cancel one
  /// (a send already under way), whose request is then freed and left to finish.
  bool cancel_pending();
  /// Now and then, as it is tested incomplete, looks at the peer: fails the operation with
  /// peer_failure, and the communicator with it, if the peer's process is seen to have ended;
  /// with size_mismatch (invalid_argument where the sizes agree) if it is a collective's receive
  /// and the peer sent a message for the same collective number under another shape (the ranks
  /// disagree about the call).
  void look_at_peer();
  /// The size_mismatch check of look_at_peer().
  void fail_if_peer_called_another_shape();

  /// One MPI request and the bytes it carries.
  struct Piece {
    MPI_Request request = MPI_REQUEST_NULL;
    std::size_t bytes = 0;
  };
  Piece& piece(std::size_t index) { return index == 0 ? first_piece_ : more_pieces_[index - 1]; }

  Description description_;
  std::shared_ptr<FatalState> fatal_;
  Piece first_piece_;  // a message up to kMpiMaxPiece needs no allocation for its request
  std::vector<Piece> more_pieces_;
  std::size_t pieces_ = 0;
  std::size_t next_pending_ = 0;
  std::exception_ptr error_;
  Clock::time_point started_ = coarse_now();  // read only by timeouts' messages
  LivenessSchedule liveness_;
};

/// Largest message piece handed to one MPI call.
inline constexpr std::size_t kMpiMaxPiece = std::size_t{1} << 30;

}  // namespace meshcomm::detail
