// pack_perf: the halo row kernels (pack: strided rows gathered into a dense buffer; unpack: the
// reverse) against a plain device-to-device copy of the same bytes, side by side in one run.
//
//   build/perftests/pack_perf [--mib 256] [--repeat 20] [--json FILE]
//
// Rows are K of a packed K|V layout (stride twice the row) or dense (stride = row), in the row
// sizes of attention heads. Bandwidth counts bytes read plus bytes written, as copies are
// usually reported; the ratio is kernel bandwidth over copy bandwidth.

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <numeric>
#include <vector>

#include "engine/command_line.hpp"
#include "device/device_runtime.hpp"

namespace {

using meshcomm::detail::device::RowPair;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

/// Median milliseconds of `run` over `repeat` timings with events on `stream`.
double median_ms(cudaStream_t stream, int repeat, const std::function<void()>& run) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  run();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    run();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms);
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 256;
  int repeat = 20;
  std::string json_path;
  meshcomm::perf::CommandLine command_line{"halo pack/unpack kernels against a device-to-device copy"};
  command_line.option("--mib", mib, "bytes moved per call, in MiB").show_default().range(1, 8192);
  command_line.option("--repeat", repeat, "timings per case; the median is reported").show_default();
  command_line.option("--json", json_path, "write one record per case to this file");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  try {
    const std::size_t bytes = mib << 20;
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    void* strided = nullptr;
    void* packed = nullptr;
    check(cudaMalloc(&strided, 2 * bytes), "cudaMalloc");
    check(cudaMalloc(&packed, bytes), "cudaMalloc");
    check(cudaMemset(strided, 1, 2 * bytes), "cudaMemset");
    const meshcomm::StreamRef ref(stream);
    const double copy_ms = median_ms(stream, repeat, [&] {
      check(cudaMemcpyAsync(packed, strided, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    });
    const double copy_gbps = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e6);
    fmt::print("# pack_perf: {} MiB per call, median of {}; device-to-device copy {:.1f} GB/s (read + write)\n", mib,
               repeat, copy_gbps);
    fmt::print("# {:>9} {:>8} {:>8} {:>10} {:>10} {:>8}\n", "row (B)", "stride", "kernel", "time (us)", "GB/s",
               "vs copy");
    nlohmann::json records = nlohmann::json::array();
    for (std::size_t row_bytes : {256, 1024, 4096, 16384}) {
      for (std::size_t stride_factor : {1, 2}) {
        const std::size_t rows = bytes / row_bytes;
        // Row r of the packed buffer is row r of the strided one, both ways.
        std::vector<RowPair> pack(rows);
        for (std::size_t r = 0; r < rows; ++r) pack[r] = {r, r};
        void* table = nullptr;
        check(cudaMalloc(&table, rows * sizeof(RowPair)), "cudaMalloc");
        auto* pairs = static_cast<RowPair*>(table);
        check(cudaMemcpy(pairs, pack.data(), rows * sizeof(RowPair), cudaMemcpyHostToDevice), "cudaMemcpy");
        const std::size_t stride = row_bytes * stride_factor;
        for (const char* kernel : {"pack", "unpack"}) {
          const bool packing = kernel[0] == 'p';
          const double ms = median_ms(stream, repeat, [&] {
            if (packing) {
              meshcomm::detail::device::copy_rows(packed, row_bytes, strided, stride, pairs, rows, row_bytes, ref);
            } else {
              meshcomm::detail::device::copy_rows(strided, stride, packed, row_bytes, pairs, rows, row_bytes, ref);
            }
          });
          const double gbps = 2.0 * static_cast<double>(rows * row_bytes) / (ms * 1e6);
          fmt::print("  {:>9} {:>8} {:>8} {:>10.1f} {:>10.1f} {:>8.3f}\n", row_bytes, stride, kernel, ms * 1e3, gbps,
                     gbps / copy_gbps);
          records.push_back({{"row_bytes", row_bytes}, {"stride_bytes", stride}, {"kernel", kernel},
                             {"time_us", ms * 1e3}, {"gbps", gbps}, {"copy_gbps", copy_gbps},
                             {"ratio", gbps / copy_gbps}});
        }
        (void)cudaFree(pairs);
      }
    }
    if (!json_path.empty()) std::ofstream(json_path) << records.dump(2) << "\n";
    (void)cudaFree(strided);
    (void)cudaFree(packed);
    (void)cudaStreamDestroy(stream);
  } catch (const std::exception& error) {
    fmt::print(stderr, "pack_perf: {}\n", error.what());
    return 1;
  }
  return 0;
}
