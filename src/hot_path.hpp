#pragma once

// MESHCOMM_HOT marks the functions a collective call runs through on its way to the backend.
//
// GCC and Clang put hot functions in .text.hot, which the linker lays out together, so the whole
// per-call path spans a few pages of code instead of being scattered over the library. That
// matters beside an NCCL call: its microseconds in NCCL and the CUDA driver push the caller's
// code out of the instruction caches and branch predictors, and the path's code is what then
// costs (perftests/HISTORY.md, "meshcomm's NCCL all-gather against the raw call").

#if defined(__GNUC__)
#define MESHCOMM_HOT [[gnu::hot]]
#else
#define MESHCOMM_HOT
#endif
