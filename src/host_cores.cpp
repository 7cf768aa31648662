#include "host_cores.hpp"

#include <sched.h>
#include <unistd.h>

#include <bit>

namespace meshcomm::detail {

CoreSet CoreSet::of_this_process() {
  CoreSet cores;
  const int bits = static_cast<int>(cores.words.size() * 64);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const bool known = sched_getaffinity(0, sizeof mask, &mask) == 0;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int core = 0; core < bits && core < CPU_SETSIZE; ++core) {
    if (known ? CPU_ISSET(core, &mask) : core < online) {
      cores.words[static_cast<std::size_t>(core / 64)] |= std::uint64_t{1} << (core % 64);
    }
  }
  return cores;
}

int CoreSet::count() const noexcept {
  int total = 0;
  for (const auto word : words) total += std::popcount(word);
  return total;
}

bool ranks_outnumber_cores(std::span<const CoreSet> same_host) noexcept {
  CoreSet all;
  for (const auto& rank : same_host) {
    for (std::size_t word = 0; word < all.words.size(); ++word) all.words[word] |= rank.words[word];
  }
  return static_cast<int>(same_host.size()) > all.count();
}

}  // namespace meshcomm::detail
