#pragma once

#include <gtest/gtest.h>

#include "meshcomm/error.hpp"

namespace meshcomm::testing {

/// Runs `call`, which must throw meshcomm::Error, and returns the error (a GoogleTest failure and
/// an `internal` error if it returns instead).
template <class Call>
Error expect_error(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected a meshcomm::Error";
  return Error(ErrorCode::internal, "no error was thrown");
}

}  // namespace meshcomm::testing
