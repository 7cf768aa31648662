#pragma once

#include <gtest/gtest.h>

#include "verifiable/device_staging.hpp"

/// Skips the current GoogleTest test with the reason unless a CUDA device is usable.
#define MESHCOMM_SKIP_WITHOUT_GPU()                                                      \
  do {                                                                                   \
    if (auto reason = ::meshcomm::verifiable::cuda_unavailable_reason(); !reason.empty()) \
      GTEST_SKIP() << "gpu test skipped: " << reason;                                    \
  } while (false)
