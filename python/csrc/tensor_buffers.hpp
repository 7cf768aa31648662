#pragma once

// Tensors as meshcomm buffers: element types, memory checks and reductions, each refused with
// a message naming the call and the argument.

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <string>

#include "meshcomm/buffer.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/types.hpp"

namespace meshcomm::torch_plugin {

/// Error(invalid_argument) for a wrong call of the plugin: "`call`: `message`".
Error invalid_call(const char* call, std::string message);

/// The meshcomm element type of `tensor`'s dtype; throws naming `call` for one meshcomm lacks.
DataType data_type_of(const at::Tensor& tensor, const char* call);

/// `tensor` as a writable view; it must be a contiguous CPU tensor.
BufferView buffer_of(const at::Tensor& tensor, const char* call, const char* argument);

/// The meshcomm reduction of torch's `op`; throws naming `call` for bitwise and pre-multiplied sums.
ReduceOp reduce_op_of(const c10d::ReduceOp& op, const char* call);

/// The single tensor of a one-tensor list (torch's multi-device lists are not supported).
const at::Tensor& only_tensor(const std::vector<at::Tensor>& tensors, const char* call, const char* argument);

}  // namespace meshcomm::torch_plugin
