#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace meshcomm::layers {

/// How a weight matrix is cut over the tp axis.
enum class TensorSplit : std::uint8_t {
  replicated,  ///< every tp rank holds all of it
  rows,        ///< column-parallel linear: rank r holds output rows [r·R/tp, (r+1)·R/tp)
  columns,     ///< row-parallel linear: rank r holds input columns [r·C/tp, (r+1)·C/tp)
};

/// One tensor of a layer's flat parameter, as this tp rank holds it.
struct TensorSlot {
  std::string name;
  std::size_t global_rows = 0, global_columns = 0;
  TensorSplit split = TensorSplit::replicated;
  std::size_t rows = 0, columns = 0;  ///< this rank's share
  std::size_t offset = 0;             ///< first element in the flat parameter
  float init_std = 0;                 ///< 0: initialised to ones (norm weights)
  bool decays = true;                 ///< AdamW's weight decay applies

  [[nodiscard]] std::size_t elements() const { return rows * columns; }
};

/// The tensors of one layer laid end to end in one flat parameter (the unit FSDP shards), each
/// cut for tensor parallelism.
class ParameterLayout {
 public:
  ParameterLayout(int tp, int tp_rank) : tp_(tp), tp_rank_(tp_rank) {}

  /// Appends a [global_rows, global_columns] tensor cut by `split`.
  void add(std::string name, std::size_t global_rows, std::size_t global_columns, TensorSplit split, float init_std,
           bool decays);

  [[nodiscard]] const std::vector<TensorSlot>& slots() const noexcept { return slots_; }
  [[nodiscard]] std::size_t elements() const noexcept { return elements_; }

  /// This rank's share of a deterministic initialisation of the whole (uncut) tensors: the same
  /// seed gives the same model under every mesh. `unit` tells the layers apart.
  [[nodiscard]] std::vector<float> initial_values(std::uint64_t seed, std::size_t unit) const;
  /// 1 where weight decay applies, 0 elsewhere, per element of the flat parameter.
  [[nodiscard]] std::vector<float> decay_mask() const;

 private:
  int tp_;
  int tp_rank_;
  std::vector<TensorSlot> slots_;
  std::size_t elements_ = 0;
};

}  // namespace meshcomm::layers
