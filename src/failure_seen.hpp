#pragma once

namespace meshcomm::detail {

/// Whether this process has made an Error that may mean a peer is gone or stuck (timeout,
/// peer_failure, backend_failure, aborted): after one, waits that involve every process (such as
/// MPI_Finalize) may never end.
[[nodiscard]] bool failure_seen() noexcept;

}  // namespace meshcomm::detail
