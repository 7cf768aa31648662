#include "algorithm.hpp"
#include "algorithms.hpp"
#include "hot_path.hpp"

namespace meshcomm::detail {

namespace {

/// Hands the collective to the backend's own implementation (MPI_Iallgather, ...): the baseline
/// every other algorithm is measured against.
template <CollectiveKind Kind>
class Native final : public AlgorithmOf<Kind> {
 public:
  Native() : AlgorithmOf<Kind>("native") {}
  std::string unsupported_reason(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    return comm.backend().native_unsupported_reason(args);
  }
  MESHCOMM_HOT bool runs(const CollectiveArgs& args, const CommunicatorImpl& comm) const override {
    return comm.backend().runs_native(args);
  }
  MESHCOMM_HOT std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const override {
    return comm.backend().start_native(args);
  }
};

}  // namespace

std::vector<std::unique_ptr<Algorithm>> make_native_algorithms() {
  std::vector<std::unique_ptr<Algorithm>> natives;
  natives.push_back(std::make_unique<Native<CollectiveKind::all_gather>>());
  natives.push_back(std::make_unique<Native<CollectiveKind::reduce_scatter>>());
  natives.push_back(std::make_unique<Native<CollectiveKind::all_reduce>>());
  natives.push_back(std::make_unique<Native<CollectiveKind::all_to_all>>());
  natives.push_back(std::make_unique<Native<CollectiveKind::all_to_allv>>());
  natives.push_back(std::make_unique<Native<CollectiveKind::broadcast>>());
  return natives;
}

}  // namespace meshcomm::detail
