#include "collective_args.hpp"

#include <span>

namespace meshcomm::detail {

AllToAllvLayout copy_layout(const AllToAllvLayout& layout, LayoutStorage& storage) {
  const std::size_t ranks = layout.send_counts.size();
  storage.clear();
  storage.reserve(4 * ranks);
  for (auto part : {layout.send_counts, layout.send_offsets, layout.recv_counts, layout.recv_offsets}) {
    storage.insert(storage.end(), part.begin(), part.end());
  }
  const std::span<const std::size_t> all(storage);
  return {all.subspan(0, ranks), all.subspan(ranks, ranks), all.subspan(2 * ranks, ranks),
          all.subspan(3 * ranks, ranks)};
}

}  // namespace meshcomm::detail
