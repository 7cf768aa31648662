#include <gtest/gtest.h>

#include <string>

#include "meshcomm/buffer.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm {
namespace {

TEST(Types, NamesAndSizes) {
  EXPECT_EQ(to_string(DataType::bf16), "bf16");
  EXPECT_EQ(to_string(DataType::i64), "i64");
  EXPECT_EQ(to_string(ReduceOp::avg), "avg");
  EXPECT_EQ(to_string(MemoryKind::cuda), "cuda");
  EXPECT_EQ(to_string(BackendKind::mpi), "mpi");
  EXPECT_EQ(size_of(DataType::f16), 2U);
  EXPECT_EQ(size_of(DataType::f64), 8U);
  EXPECT_EQ(size_of(DataType::u8), 1U);
  static_assert(data_type_of<float> == DataType::f32);
  static_assert(data_type_of<const bfloat16> == DataType::bf16);
  static_assert(data_type_of<std::int64_t> == DataType::i64);
}

TEST(Types, BufferViewsFromRanges) {
  std::vector<double> values(5);
  BufferView view(values);
  EXPECT_EQ(view.count, 5U);
  EXPECT_EQ(view.type, DataType::f64);
  EXPECT_EQ(view.bytes(), 40U);
  EXPECT_EQ(view.memory, MemoryKind::host);
  const std::vector<std::int32_t> constant(3);
  ConstBufferView read_only(constant);
  EXPECT_EQ(read_only.type, DataType::i32);
  ConstBufferView converted = view;
  EXPECT_EQ(converted.data, values.data());
}

TEST(Error, MessageCarriesContext) {
  Error error(ErrorCode::timeout, "receive got nothing",
              {.backend = "mpi", .operation = "irecv", .rank = 0, .peer = 3, .sequence = 12});
  const std::string text = error.what();
  EXPECT_EQ(error.code(), ErrorCode::timeout);
  EXPECT_NE(text.find("timeout"), std::string::npos) << text;
  EXPECT_NE(text.find("irecv"), std::string::npos) << text;
  EXPECT_NE(text.find("peer 3"), std::string::npos) << text;
  EXPECT_NE(text.find("seq 12"), std::string::npos) << text;
  EXPECT_EQ(error.message(), "receive got nothing");
}

}  // namespace
}  // namespace meshcomm
