// copy_step_perf: how this machine copies where a copy's destination is out of step with its
// source within a page (src/plain_copy.hpp): glibc's memcpy, meshcomm's plain_copy(), and a kernel
// copy between processes (process_vm_readv, here of this process's own memory) straight and as
// meshcomm takes it (through a bounce buffer in step, where the kernel's copies run slower so).
// One process, no mpirun:
//
//   build/perftests/copy_step_perf [-b 4K] [-e 4M] [-f 4] [-n 50] [-r 5] [--ahead 0,16,64] [--json FILE]
//
// `ahead`: how many bytes past the source's offset within a page the destination lies (1-63 is
// out of step). Each round runs every variant at every offset in turn; the table gives the
// median over rounds of the time per copy, and `x in step`: that time over the same variant's
// at offset 0 (the median of the per-round ratios). After each variant's timed copies at each
// offset, one more copy into a cleared destination is checked byte for byte; the last line counts
// the copies that were wrong.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/command_line.hpp"
#include "engine/perf_options.hpp"
#include "plain_copy.hpp"
#include "process_memory.hpp"

namespace {

using meshcomm::detail::OutOfStepRoute;

struct FreeMemory {
  void operator()(std::byte* memory) const noexcept { std::free(memory); }
};
using PageAligned = std::unique_ptr<std::byte, FreeMemory>;

/// `bytes` of page-aligned memory, each byte numbered (a pattern that no shifted copy matches).
PageAligned page_aligned(std::size_t bytes) {
  const std::size_t whole_pages = (bytes + meshcomm::detail::kCopyPageBytes - 1) / meshcomm::detail::kCopyPageBytes;
  auto* memory = static_cast<std::byte*>(
      std::aligned_alloc(meshcomm::detail::kCopyPageBytes, whole_pages * meshcomm::detail::kCopyPageBytes));
  if (memory == nullptr) throw std::runtime_error(fmt::format("cannot allocate {} bytes", bytes));
  for (std::size_t i = 0; i < bytes; ++i) memory[i] = static_cast<std::byte>(i * 7 + i / 251);
  return PageAligned(memory);
}

/// One way of copying `bytes` from `from` to `to`.
struct Variant {
  const char* name;
  std::function<void(std::byte* to, const std::byte* from, std::size_t bytes)> copy;
};

std::vector<Variant> variants() {
  const std::int64_t self = getpid();
  auto kernel_copy = [self](OutOfStepRoute route) {
    return [self, route](std::byte* to, const std::byte* from, std::size_t bytes) {
      if (meshcomm::detail::read_from_process(self, reinterpret_cast<std::uint64_t>(from), to, bytes, route) != 0) {
        throw std::runtime_error("process_vm_readv of this process failed");
      }
    };
  };
  return {
      {"memcpy", [](std::byte* to, const std::byte* from, std::size_t bytes) { std::memcpy(to, from, bytes); }},
      {"plain_copy", [](std::byte* to, const std::byte* from,
                        std::size_t bytes) { meshcomm::detail::plain_copy(to, from, bytes); }},
      {"kernel copy, straight", kernel_copy(OutOfStepRoute::direct)},
      {"kernel copy, as meshcomm takes it", kernel_copy(OutOfStepRoute::measured)},
  };
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string min_text = "4K";
  std::string max_text = "4M";
  int factor = 4;
  int iterations = 50;
  int rounds = 5;
  std::vector<std::string> ahead_texts{"0", "16", "64"};
  std::string json_path;
  meshcomm::perf::CommandLine command_line{
      "copies whose destination is out of step with their source within a page: memcpy, meshcomm's plain_copy and "
      "kernel copies (one process, no mpirun)"};
  command_line.option("-b,--minbytes", min_text, "smallest copy (K, M, G suffixes)").show_default();
  command_line.option("-e,--maxbytes", max_text, "largest copy").show_default();
  command_line.option("-f,--stepfactor", factor, "multiply the size by this much each step")
      .range(2, 1 << 20)
      .show_default();
  command_line.option("-n,--iters", iterations, "copies per variant per round").positive().show_default();
  command_line.option("-r,--rounds", rounds, "rounds; the median is reported").positive().show_default();
  command_line
      .option("--ahead", ahead_texts, "bytes the destination lies past the source's offset within a page (0-4095)")
      .split_at(',')
      .check(
          [](const std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 4 &&
                                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
            return digits && std::stoul(text) < 4096 ? "" : fmt::format("'{}' is not a byte count from 0 to 4095", text);
          },
          "BYTES,...")
      .show_default();
  command_line.option("--json", json_path, "also write the results to this JSON file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  std::size_t min_bytes = 0;
  std::size_t max_bytes = 0;
  try {
    min_bytes = meshcomm::perf::parse_size(min_text, "-b");
    max_bytes = meshcomm::perf::parse_size(max_text, "-e");
    if (min_bytes == 0 || max_bytes < min_bytes) {
      throw std::invalid_argument(
          fmt::format("-b {} and -e {}: give -b at least 1 and -e at least -b", min_text, max_text));
    }
  } catch (const std::invalid_argument& error) {
    fmt::print(stderr, "copy_step_perf: {}\n", error.what());
    return 2;
  }
  // Offset 0 first: every row's ratio is over it.
  std::vector<std::size_t> aheads{0};
  for (const auto& text : ahead_texts) {
    if (const std::size_t ahead = std::stoul(text); ahead != 0) aheads.push_back(ahead);
  }
  meshcomm::detail::allow_peers_to_read_this_process();

  const std::size_t page = meshcomm::detail::kCopyPageBytes;
  auto source = page_aligned(max_bytes + page);
  auto destination = page_aligned(max_bytes + 2 * page);
  const auto ways = variants();
  fmt::print("# copy_step_perf: {} copies x {} rounds, median per copy\n", iterations, rounds);
  fmt::print("{:>10} {:>6}  {:<34} {:>10} {:>8} {:>11}\n", "bytes", "ahead", "variant", "time (us)", "GB/s",
             "x in step");
  nlohmann::json records = nlohmann::json::array();
  int wrong = 0;  // checked copies that did not land every byte
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= static_cast<std::size_t>(factor)) {
    // times[variant][ahead index] over rounds
    std::vector<std::vector<std::vector<double>>> times(ways.size(),
                                                        std::vector<std::vector<double>>(aheads.size()));
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t way = 0; way < ways.size(); ++way) {
        for (std::size_t at = 0; at < aheads.size(); ++at) {
          std::byte* to = destination.get() + aheads[at];
          ways[way].copy(to, source.get(), bytes);  // warm
          const auto began = std::chrono::steady_clock::now();
          for (int i = 0; i < iterations; ++i) ways[way].copy(to, source.get(), bytes);
          times[way][at].push_back(
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began).count() /
              iterations);
          std::memset(to, 0xEE, bytes);
          ways[way].copy(to, source.get(), bytes);
          if (std::memcmp(to, source.get(), bytes) != 0) ++wrong;
        }
      }
    }
    for (std::size_t way = 0; way < ways.size(); ++way) {
      for (std::size_t at = 0; at < aheads.size(); ++at) {
        std::vector<double> ratios;
        for (int round = 0; round < rounds; ++round) ratios.push_back(times[way][at][round] / times[way][0][round]);
        const double time_us = median(times[way][at]);
        const double slower = median(ratios);
        fmt::print("{:>10} {:>6}  {:<34} {:>10.2f} {:>8.2f} {:>10.2f}x\n", bytes, aheads[at], ways[way].name, time_us,
                   static_cast<double>(bytes) / time_us / 1e3, slower);
        records.push_back({{"bytes", bytes},
                           {"ahead", aheads[at]},
                           {"variant", ways[way].name},
                           {"time_us", time_us},
                           {"gb_per_s", static_cast<double>(bytes) / time_us / 1e3},
                           {"vs_in_step", slower}});
      }
    }
  }
  fmt::print("# wrong copies: {}\n", wrong);
  if (!json_path.empty()) std::ofstream(json_path) << records.dump(2) << '\n';
  return wrong == 0 ? 0 : 1;
}
