// A build without CUDA: device memory is refused with an error that says how to get it.

#include "device_runtime.hpp"
#include "meshcomm/error.hpp"

namespace meshcomm::detail::device {

namespace {
[[noreturn]] void refuse(const char* what) {
  throw Error(ErrorCode::unsupported,
              "CUDA memory needs a build with CUDA (configure with -DMESHCOMM_WITH_CUDA=ON where the CUDA toolkit "
              "is installed); this build has none",
              {.backend = "cuda", .operation = what});
}
}  // namespace

bool built() noexcept { return false; }
bool visible() { return false; }
std::string pointer_problem(const void*) { return "this build has no CUDA support (MESHCOMM_WITH_CUDA=OFF)"; }
void copy(void*, const void*, std::size_t, StreamRef) { refuse("copy"); }
void reduce_into(void*, const void*, std::size_t, DataType, ReduceOp, StreamRef) { refuse("reduce_into"); }
void reduce_pair(void*, const void*, const void*, std::size_t, DataType, ReduceOp, StreamRef) {
  refuse("reduce_pair");
}
void divide_for_average(void*, std::size_t, DataType, int, StreamRef) { refuse("divide_for_average"); }
void copy_rows(void*, std::size_t, const void*, std::size_t, const RowPair*, std::size_t, std::size_t, StreamRef,
               Completion) {
  refuse("copy_rows");
}
void add_rows(void*, std::size_t, const void*, std::size_t, const RowPair*, std::size_t, std::size_t, DataType,
              StreamRef, Completion) {
  refuse("add_rows");
}
void copy_on_stream(void*, const void*, std::size_t, int, StreamRef) { refuse("copy_on_stream"); }
void copy_2d(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t, StreamRef) { refuse("copy_2d"); }
void synchronize(StreamRef) { refuse("synchronize"); }
void* allocate(std::size_t) { refuse("allocate"); }
void release(void*) noexcept {}

}  // namespace meshcomm::detail::device
