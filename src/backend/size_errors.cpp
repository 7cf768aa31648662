// The size_mismatch errors of a receive whose message is not the size posted, alike on every
// backend.

#include <fmt/format.h>

#include "backend.hpp"

namespace meshcomm::detail {

Error message_too_large(const CallSite& site, int tag, std::size_t posted_bytes) {
  return Error(ErrorCode::size_mismatch,
               fmt::format("message size mismatch on tag {}: peer {} sent more than the {} bytes this rank posted a "
                           "receive for; both sides must agree",
                           tag, site.peer, posted_bytes),
               site.context());
}

Error message_of_other_size(const CallSite& site, int tag, std::size_t sent_bytes, std::size_t posted_bytes) {
  return Error(ErrorCode::size_mismatch,
               fmt::format("message size mismatch on tag {}: peer {} sent {} bytes but this rank posted a receive of {} "
                           "bytes; both sides must agree",
                           tag, site.peer, sent_bytes, posted_bytes),
               site.context());
}

}  // namespace meshcomm::detail
