#include "tensor_buffers.hpp"

#include <fmt/format.h>

#include "meshcomm/error.hpp"

namespace meshcomm::torch_plugin {

Error invalid_call(const char* call, std::string message) {
  return Error(ErrorCode::invalid_argument, fmt::format("{}: {}", call, message),
               {.backend = "meshcomm (torch)", .operation = call});
}

DataType data_type_of(const at::Tensor& tensor, const char* call) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return DataType::f32;
    case at::kDouble: return DataType::f64;
    case at::kHalf: return DataType::f16;
    case at::kBFloat16: return DataType::bf16;
    case at::kChar: return DataType::i8;
    case at::kByte:
    case at::kBool: return DataType::u8;
    case at::kInt: return DataType::i32;
    case at::kLong: return DataType::i64;
    default: break;
  }
  throw invalid_call(call, fmt::format("dtype {} is not one meshcomm moves; use float32, float64, float16, bfloat16, "
                                  "int8, uint8, bool, int32 or int64",
                                  c10::toString(tensor.scalar_type())));
}

BufferView buffer_of(const at::Tensor& tensor, const char* call, const char* argument) {
  if (!tensor.device().is_cpu()) {
    throw Error(ErrorCode::unsupported,
                fmt::format("{}: {} is on {}; this build of the meshcomm backend moves CPU tensors", call, argument,
                            tensor.device().str()),
                {.backend = "meshcomm (torch)", .operation = call});
  }
  if (!tensor.is_contiguous()) {
    throw invalid_call(call, fmt::format("{} is not contiguous; pass tensor.contiguous()", argument));
  }
  return {tensor.data_ptr(), static_cast<std::size_t>(tensor.numel()), data_type_of(tensor, call)};
}

ReduceOp reduce_op_of(const c10d::ReduceOp& op, const char* call) {
  switch (static_cast<c10d::ReduceOp::RedOpType>(op)) {
    case c10d::ReduceOp::SUM: return ReduceOp::sum;
    case c10d::ReduceOp::AVG: return ReduceOp::avg;
    case c10d::ReduceOp::PRODUCT: return ReduceOp::prod;
    case c10d::ReduceOp::MIN: return ReduceOp::min;
    case c10d::ReduceOp::MAX: return ReduceOp::max;
    default: break;
  }
  throw invalid_call(call, fmt::format("reduce op {} is not one meshcomm has; use SUM, AVG, PRODUCT, MIN or MAX",
                                  static_cast<int>(static_cast<c10d::ReduceOp::RedOpType>(op))));
}

const at::Tensor& only_tensor(const std::vector<at::Tensor>& tensors, const char* call, const char* argument) {
  if (tensors.size() != 1) {
    throw invalid_call(call, fmt::format("{} holds {} tensors; the meshcomm backend takes one per process", argument,
                                    tensors.size()));
  }
  return tensors.front();
}

}  // namespace meshcomm::torch_plugin
