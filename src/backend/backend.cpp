#include "backend.hpp"

#include <fmt/format.h>

#include "shared_memory/shared_segment.hpp"

namespace meshcomm::detail {

std::shared_ptr<SegmentProvider> Backend::segment_provider() const { return make_posix_segments(); }

std::shared_ptr<WorkState> Backend::put(ConstBufferView, int peer, const std::string&, std::size_t,
                                        OperationLabel label) {
  throw Error(ErrorCode::unsupported,
              fmt::format("the {} backend has no one-sided puts; the ucx backend has them", to_string(kind())),
              context(label, peer));
}

}  // namespace meshcomm::detail
