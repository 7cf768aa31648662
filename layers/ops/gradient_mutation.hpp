#pragma once

#include <cstdint>
#include <string_view>

namespace meshcomm::layers {

/// One term that the hand-written backward passes can be told to leave out, so that a test can
/// show its gradient check catches a missing term (mutation testing). Nothing but such a test sets
/// one: while none is in force every backward pass computes its full gradient.
enum class GradientMutation : std::uint8_t {
  none,
  drop_residual,          ///< block backward: d_x leaves out the attention residual's gradient
  zero_norm_gradient,     ///< RMSNorm backward: nothing is added to the weight gradient
  drop_norm_correction,   ///< RMSNorm backward: d_x leaves out the term through the row's rms
  drop_softmax_row_term,  ///< attention backward: dS = P·dP·scale, leaving out −P·delta
};

/// "none", "drop_residual", "zero_norm_gradient", "drop_norm_correction", "drop_softmax_row_term".
std::string_view to_string(GradientMutation mutation) noexcept;

/// The mutation in force on the calling thread: `none` unless a ScopedGradientMutation is alive on it.
[[nodiscard]] GradientMutation active_gradient_mutation() noexcept;

/// Puts `mutation` in force on the calling thread for the object's lifetime (tests only):
///
///     ScopedGradientMutation broken(GradientMutation::drop_residual);
///     block_backward(...);   // right: this thread's backward leaves the residual out
///     // wrong: expecting another thread (a rank's thread) to see it
class ScopedGradientMutation {
 public:
  explicit ScopedGradientMutation(GradientMutation mutation) noexcept;
  ~ScopedGradientMutation();
  ScopedGradientMutation(const ScopedGradientMutation&) = delete;
  ScopedGradientMutation& operator=(const ScopedGradientMutation&) = delete;

 private:
  GradientMutation previous_;
};

}  // namespace meshcomm::layers
