#include "mpi_backend.hpp"

#include <algorithm>

#include "mpi_check.hpp"
#include "mpi_operation.hpp"

namespace meshcomm::detail {

MpiBackend::MpiBackend(MPI_Comm user) : user_(user) {
  const ErrorContext where{.backend = "mpi", .operation = "create"};
  check_mpi(MPI_Comm_set_errhandler(user_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", where);
  check_mpi(MPI_Comm_rank(user_, &rank_), "MPI_Comm_rank", where);
  check_mpi(MPI_Comm_size(user_, &size_), "MPI_Comm_size", where);
  check_mpi(MPI_Comm_dup(user_, &internal_), "MPI_Comm_dup", where);
  // MPI attaches the tag bound to MPI_COMM_WORLD and it holds for every communicator; Open MPI
  // does not repeat it on communicators made by MPI_Comm_split.
  for (MPI_Comm holder : {user_, MPI_COMM_WORLD}) {
    int* upper_bound = nullptr;
    int found = 0;
    MPI_Comm_get_attr(holder, MPI_TAG_UB, &upper_bound, &found);
    if (found != 0 && upper_bound != nullptr) {
      max_tag_ = std::min(*upper_bound, (1 << 30) - 1);
      break;
    }
  }
}

MpiBackend::~MpiBackend() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Open MPI frees a communicator locally; nothing here waits on other ranks.
  if (internal_ != MPI_COMM_NULL) MPI_Comm_free(&internal_);
  if (user_ != MPI_COMM_NULL) MPI_Comm_free(&user_);
}

namespace {

/// Starts `operation`'s pieces over `bytes` bytes at `base`; `start_piece(pointer, count)`
/// posts one piece and returns its request.
template <class StartPiece>
std::shared_ptr<WorkState> start_in_pieces(std::shared_ptr<MpiOperation> operation, std::byte* base,
                                           std::size_t bytes, StartPiece start_piece) {
  std::size_t offset = 0;
  do {
    const std::size_t piece = std::min(bytes - offset, kMpiMaxPiece);
    operation->add_piece(start_piece(base + offset, static_cast<int>(piece)), piece);
    offset += piece;
  } while (offset < bytes);
  return operation;
}

}  // namespace

std::shared_ptr<WorkState> MpiBackend::isend(ConstBufferView data, int peer, int tag, Lane lane,
                                             OperationLabel label, StreamRef) {
  const auto where = call_site(label, peer);
  auto operation = std::make_shared<MpiOperation>(
      MpiOperation::Description{.is_send = true, .peer = peer, .tag = tag, .bytes = data.bytes(), .site = where},
      fatal_state());
  // MPI_Isend only reads through the pointer.
  auto* base = static_cast<std::byte*>(const_cast<void*>(data.data));
  return start_in_pieces(std::move(operation), base, data.bytes(), [&](std::byte* pointer, int count) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(pointer, count, MPI_BYTE, peer, tag, comm(lane), &request), "MPI_Isend", where);
    return request;
  });
}

std::shared_ptr<WorkState> MpiBackend::irecv(BufferView data, int peer, int tag, Lane lane, OperationLabel label,
                                             StreamRef) {
  const auto where = call_site(label, peer);
  auto operation = std::make_shared<MpiOperation>(
      MpiOperation::Description{.is_send = false, .peer = peer, .tag = tag, .bytes = data.bytes(), .site = where},
      fatal_state());
  return start_in_pieces(std::move(operation), static_cast<std::byte*>(data.data), data.bytes(),
                         [&](std::byte* pointer, int count) {
                           MPI_Request request = MPI_REQUEST_NULL;
                           check_mpi(MPI_Irecv(pointer, count, MPI_BYTE, peer, tag, comm(lane), &request), "MPI_Irecv",
                                     where);
                           return request;
                         });
}

std::unique_ptr<Backend> MpiBackend::split(std::span<const int> members, int color, std::uint64_t) {
  const auto me = std::find(members.begin(), members.end(), rank_);
  const int new_rank = static_cast<int>(me - members.begin());
  MPI_Comm child = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(user_, color, new_rank, &child), "MPI_Comm_split",
            {.backend = "mpi", .operation = "split", .rank = rank_});
  return std::make_unique<MpiBackend>(child);
}

std::unique_ptr<Backend> make_mpi_backend(MPI_Comm comm) {
  MPI_Comm user = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &user), "MPI_Comm_dup", {.backend = "mpi", .operation = "create"});
  return std::make_unique<MpiBackend>(user);
}

}  // namespace meshcomm::detail
