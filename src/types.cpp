#include "meshcomm/types.hpp"

namespace meshcomm {

std::string_view to_string(DataType type) noexcept {
  switch (type) {
    case DataType::f32: return "f32";
    case DataType::f64: return "f64";
    case DataType::f16: return "f16";
    case DataType::bf16: return "bf16";
    case DataType::i8: return "i8";
    case DataType::u8: return "u8";
    case DataType::i32: return "i32";
    case DataType::u32: return "u32";
    case DataType::i64: return "i64";
    case DataType::u64: return "u64";
  }
  return "unknown";
}

std::string_view to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "unknown";
}

std::string_view to_string(MemoryKind kind) noexcept {
  switch (kind) {
    case MemoryKind::host: return "host";
    case MemoryKind::cuda: return "cuda";
  }
  return "unknown";
}

}  // namespace meshcomm
