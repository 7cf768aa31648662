#pragma once

// Test and benchmark data on the GPU: callers fill and check host bytes, and stage them to and
// from CUDA memory around the call under test. In a build without CUDA nothing is visible and
// staging throws.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace meshcomm::verifiable {

/// Empty if a CUDA device can be used by this test process, else why not (the skip message).
std::string cuda_unavailable_reason();

/// `bytes` of device memory, freed when the last copy of the pointer goes.
std::shared_ptr<std::byte> device_bytes(std::size_t bytes);

/// Copies host bytes to the device and back (synchronous).
void copy_to_device(void* device, const void* host, std::size_t bytes);
void copy_to_host(void* host, const void* device, std::size_t bytes);

/// A CUDA stream of its own, destroyed when the last copy of the pointer goes.
std::shared_ptr<void> new_stream();

/// Blocks until `stream`'s work so far is done.
void synchronize_stream(void* stream);

/// Milliseconds of `stream` spent running what `timed` queues on it (CUDA events around it).
double stream_milliseconds(void* stream, const std::function<void()>& timed);

}  // namespace meshcomm::verifiable
