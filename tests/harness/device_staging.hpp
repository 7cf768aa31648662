#pragma once

// Test data on the GPU: tests fill and check host bytes, and stage them to and from CUDA memory
// around the call under test. In a build without CUDA nothing is visible and staging throws.

#include <cstddef>
#include <memory>
#include <string>

namespace meshcomm::testing {

/// Empty if a CUDA device can be used by this test process, else why not (the skip message).
std::string cuda_unavailable_reason();

/// `bytes` of device memory, freed when the last copy of the pointer goes.
std::shared_ptr<std::byte> device_bytes(std::size_t bytes);

/// Copies host bytes to the device and back (synchronous).
void copy_to_device(void* device, const void* host, std::size_t bytes);
void copy_to_host(void* host, const void* device, std::size_t bytes);

/// Skips the current GoogleTest test with the reason unless a CUDA device is usable.
#define MESHCOMM_SKIP_WITHOUT_GPU()                                                   \
  do {                                                                                \
    if (auto reason = ::meshcomm::testing::cuda_unavailable_reason(); !reason.empty()) \
      GTEST_SKIP() << "gpu test skipped: " << reason;                                 \
  } while (false)

}  // namespace meshcomm::testing
