// The streaming reduction: every element of every chunk, whole and partial, against sums and
// maxima computed here element by element.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "reduction.hpp"

namespace meshcomm::detail {
namespace {

/// Input `input`'s element i: small integers, so that every sum here is exact in any type.
template <class T>
T value_of(std::size_t input, std::size_t i) {
  return static_cast<T>((i * 7 + input * 13) % 61);
}

template <class T>
void expect_exact(DataType type, ReduceOp op) {
  // Chunks of 16 KiB: counts below one, exactly two, and two plus a partial third.
  const std::size_t per_chunk = (std::size_t{16} << 10) / sizeof(T);
  for (std::size_t count : {std::size_t{1}, std::size_t{37}, 2 * per_chunk, 2 * per_chunk + 5}) {
    for (std::size_t inputs_count : {1, 2, 3, 5}) {
      std::vector<std::vector<T>> inputs(inputs_count, std::vector<T>(count));
      std::vector<const void*> pointers;
      for (std::size_t input = 0; input < inputs_count; ++input) {
        for (std::size_t i = 0; i < count; ++i) inputs[input][i] = value_of<T>(input, i);
        pointers.push_back(inputs[input].data());
      }
      std::vector<T> output(count + 1, T{99});  // one more, which must stay untouched
      reduce_streaming(output.data(), pointers, count, type, op);
      for (std::size_t i = 0; i < count; ++i) {
        T expected = inputs[0][i];
        for (std::size_t input = 1; input < inputs_count; ++input) {
          expected = op == ReduceOp::max ? std::max(expected, inputs[input][i])
                                         : static_cast<T>(expected + inputs[input][i]);
        }
        ASSERT_EQ(output[i], expected) << "count " << count << ", " << inputs_count << " inputs, element " << i;
      }
      EXPECT_EQ(output[count], T{99}) << "count " << count << ": written past the output";
    }
  }
}

TEST(ReduceStreaming, OutputMayBeTheFirstInput) {
  const std::size_t count = 3 * ((std::size_t{16} << 10) / sizeof(float)) + 3;
  std::vector<float> first(count), second(count);
  for (std::size_t i = 0; i < count; ++i) {
    first[i] = value_of<float>(0, i);
    second[i] = value_of<float>(1, i);
  }
  const std::vector<float> before = first;
  const std::vector<const void*> inputs{first.data(), second.data()};
  reduce_streaming(first.data(), inputs, count, DataType::f32, ReduceOp::sum);
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(first[i], before[i] + second[i]) << "element " << i;
}

TEST(ReduceStreaming, SumsAndMaximaOfEveryChunkAreExact) {
  expect_exact<float>(DataType::f32, ReduceOp::sum);
  expect_exact<float>(DataType::f32, ReduceOp::max);
  expect_exact<double>(DataType::f64, ReduceOp::sum);
  expect_exact<std::int32_t>(DataType::i32, ReduceOp::sum);
  expect_exact<std::uint8_t>(DataType::u8, ReduceOp::max);
}

}  // namespace
}  // namespace meshcomm::detail
