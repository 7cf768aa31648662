// A build without CUDA has no CUDA memory to move between processes.

#include "halo_ipc.hpp"

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

std::unique_ptr<HaloIpc> make_halo_ipc(CommunicatorImpl& comm, const std::array<IpcDirectionLayout, 2>& /*directions*/,
                                       int /*first_tag*/, int /*tag_slots*/, OperationLabel label) {
  throw Error(ErrorCode::unsupported, "meshcomm was built without CUDA (MESHCOMM_WITH_CUDA=OFF)",
              comm.context(label));
}

}  // namespace meshcomm::detail
