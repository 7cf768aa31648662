#pragma once

#include <gtest/gtest.h>

#include "verifiable/device_staging.hpp"

/// Skips the current GoogleTest test with the reason unless a CUDA device is usable.
#define MESHCOMM_SKIP_WITHOUT_GPU()                                                      \
  do {                                                                                   \
    if (auto reason = ::meshcomm::verifiable::cuda_unavailable_reason(); !reason.empty()) \
      GTEST_SKIP() << "gpu test skipped: " << reason;                                    \
  } while (false)

namespace meshcomm::testing {

/// A parametrised test that is skipped, with the reason, where no CUDA device is usable.
template <class Param>
class GpuTestWithParam : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { MESHCOMM_SKIP_WITHOUT_GPU(); }
};

}  // namespace meshcomm::testing
