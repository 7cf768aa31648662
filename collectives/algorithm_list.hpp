#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "algorithm.hpp"

namespace meshcomm::detail {

/// Every algorithm meshcomm offers, in one explicit list (no static registration).
class AlgorithmList {
 public:
  /// The built-in algorithms.
  static AlgorithmList built_in();

  /// The algorithm called `name` for `kind`, or nullptr.
  [[nodiscard]] const Algorithm* find(CollectiveKind kind, std::string_view name) const noexcept;
  /// Names of the algorithms for `kind`, in list order.
  [[nodiscard]] std::vector<std::string_view> names(CollectiveKind kind) const;

 private:
  std::vector<std::unique_ptr<Algorithm>> algorithms_;
  /// The same algorithms by kind, with their names: `find` runs on every call.
  struct Named {
    std::string_view name;
    const Algorithm* algorithm;
  };
  std::array<std::vector<Named>, 6> by_kind_;
};

}  // namespace meshcomm::detail
