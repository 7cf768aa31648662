#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/export.hpp"

namespace meshcomm {

/// One named axis of a device mesh. `size` is -1 while it is still to be inferred.
struct MeshAxis {
  std::string name;
  int size = 1;
};

/// The shape of a device mesh: an ordered list of named axes whose sizes multiply to the world
/// size. The last axis varies fastest over ranks in the row-major placement.
///
/// ```
/// auto spec = MeshSpec::parse("1,-1,4,1").resolved(16);  // dp=1 fsdp=4 tp=4 sp=1
/// auto named = MeshSpec::parse("dp:2,fsdp:-1,tp:4");       // axes named and ordered as given
/// ```
class MESHCOMM_API MeshSpec {
 public:
  /// Axis names given to a bare list of sizes, in order.
  static constexpr std::array<std::string_view, 4> default_axis_names{"dp", "fsdp", "tp", "sp"};

  /// Parses "1,-1,4,1" (sizes for dp, fsdp, tp, sp in turn; fewer sizes name fewer axes) or
  /// "dp:2,fsdp:-1,tp:4" (named axes in the given order). At most one size may be -1. Throws
  /// `Error(invalid_argument)` quoting the input and saying what would be valid.
  static MeshSpec parse(std::string_view text);

  /// The same axes, with the -1 size inferred from `world_size`. Throws `Error(invalid_argument)`
  /// if the sizes cannot multiply to `world_size`, listing the sizes that would.
  [[nodiscard]] MeshSpec resolved(int world_size) const;

  /// The axes in order.
  [[nodiscard]] std::span<const MeshAxis> axes() const noexcept { return axes_; }
  /// Position of the axis called `name`, or nothing.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;
  /// True when no size is -1.
  [[nodiscard]] bool is_resolved() const noexcept;
  /// Product of the sizes (of the known sizes, if one is still -1).
  [[nodiscard]] int known_product() const noexcept;
  /// "dp:1,fsdp:4,tp:4,sp:1"
  [[nodiscard]] std::string to_string() const;
  /// The text this spec was parsed from.
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

 private:
  std::vector<MeshAxis> axes_;
  std::string text_;
};

/// Splits an axis list such as "dp,fsdp" into its names (views into `text`).
MESHCOMM_API std::vector<std::string_view> split_axis_list(std::string_view text);

}  // namespace meshcomm
