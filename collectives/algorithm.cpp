#include "algorithm.hpp"

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::detail {

std::shared_ptr<WorkState> Algorithm::start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args, int) const {
  throw Error(ErrorCode::internal,
              fmt::format("algorithm '{}' of {} cannot take a call over part-way", name(), to_string(kind())),
              comm.context(args.label));
}

std::shared_ptr<WorkState> Algorithm::start_in_slots_if(CommunicatorImpl& comm, const CollectiveArgs& args,
                                                        std::function<bool()> /*runs*/) const {
  throw Error(ErrorCode::internal,
              fmt::format("algorithm '{}' of {} cannot take a call over on the eager slots", name(),
                          to_string(kind())),
              comm.context(args.label));
}

}  // namespace meshcomm::detail
