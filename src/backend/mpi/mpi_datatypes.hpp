#pragma once

// meshcomm's element types and reductions as MPI names them. Header-only, so that the perftests'
// Open MPI reference calls use the same mapping as the mpi backend's native collectives.

#include <mpi.h>

#include "meshcomm/types.hpp"

namespace meshcomm::detail {

/// The MPI datatype of `type`; MPI_DATATYPE_NULL for f16 and bf16, which Open MPI cannot reduce.
inline MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::f32: return MPI_FLOAT;
    case DataType::f64: return MPI_DOUBLE;
    case DataType::i8: return MPI_INT8_T;
    case DataType::u8: return MPI_UINT8_T;
    case DataType::i32: return MPI_INT32_T;
    case DataType::u32: return MPI_UINT32_T;
    case DataType::i64: return MPI_INT64_T;
    case DataType::u64: return MPI_UINT64_T;
    case DataType::f16:
    case DataType::bf16: break;
  }
  return MPI_DATATYPE_NULL;
}

/// The MPI reduction of `op`; avg is MPI_SUM, divided by the caller after completion.
inline MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

}  // namespace meshcomm::detail
