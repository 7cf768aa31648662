#include "gradient_mutation.hpp"

namespace meshcomm::layers {

namespace {

thread_local GradientMutation active = GradientMutation::none;

}  // namespace

std::string_view to_string(GradientMutation mutation) noexcept {
  switch (mutation) {
    case GradientMutation::none: return "none";
    case GradientMutation::drop_residual: return "drop_residual";
    case GradientMutation::zero_norm_gradient: return "zero_norm_gradient";
    case GradientMutation::drop_norm_correction: return "drop_norm_correction";
    case GradientMutation::drop_softmax_row_term: return "drop_softmax_row_term";
  }
  return "unknown";
}

GradientMutation active_gradient_mutation() noexcept { return active; }

ScopedGradientMutation::ScopedGradientMutation(GradientMutation mutation) noexcept : previous_(active) {
  active = mutation;
}

ScopedGradientMutation::~ScopedGradientMutation() { active = previous_; }

}  // namespace meshcomm::layers
