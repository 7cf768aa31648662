#pragma once

#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>

#include "meshcomm/types.hpp"

namespace meshcomm {

/// A read-only, non-owning view of typed elements: pointer, element count, type and memory kind.
///
/// Made from any contiguous range or span of a supported element type:
/// `comm.isend(ConstBufferView(values), peer, tag)` with `std::vector<float> values`.
struct ConstBufferView {
  const void* data = nullptr;
  std::size_t count = 0;
  DataType type = DataType::u8;
  MemoryKind memory = MemoryKind::host;

  constexpr ConstBufferView() noexcept = default;
  /// Views raw memory; `count` is in elements of `type`.
  constexpr ConstBufferView(const void* pointer, std::size_t element_count, DataType element_type,
                            MemoryKind memory_kind = MemoryKind::host) noexcept
      : data(pointer), count(element_count), type(element_type), memory(memory_kind) {}
  /// Views a span of elements; `memory_kind` says where they live.
  template <class T>
  constexpr ConstBufferView(std::span<T> elements, MemoryKind memory_kind = MemoryKind::host) noexcept
      : ConstBufferView(elements.data(), elements.size(), data_type_of<T>, memory_kind) {}
  /// Views a contiguous range such as `std::vector<float>` or `std::array<int, 4>`.
  template <std::ranges::contiguous_range R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, ConstBufferView>)
  constexpr ConstBufferView(R& range, MemoryKind memory_kind = MemoryKind::host) noexcept
      : ConstBufferView(std::span(range), memory_kind) {}

  /// Size of the view in bytes.
  [[nodiscard]] std::size_t bytes() const noexcept { return count * size_of(type); }
};

/// A writable, non-owning view of typed elements; converts to `ConstBufferView`.
struct BufferView {
  void* data = nullptr;
  std::size_t count = 0;
  DataType type = DataType::u8;
  MemoryKind memory = MemoryKind::host;

  constexpr BufferView() noexcept = default;
  /// Views raw memory; `count` is in elements of `type`.
  constexpr BufferView(void* pointer, std::size_t element_count, DataType element_type,
                       MemoryKind memory_kind = MemoryKind::host) noexcept
      : data(pointer), count(element_count), type(element_type), memory(memory_kind) {}
  /// Views a span of mutable elements.
  template <class T>
    requires(!std::is_const_v<T>)
  constexpr BufferView(std::span<T> elements, MemoryKind memory_kind = MemoryKind::host) noexcept
      : BufferView(elements.data(), elements.size(), data_type_of<T>, memory_kind) {}
  /// Views a mutable contiguous range such as `std::vector<float>`.
  template <std::ranges::contiguous_range R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, BufferView> &&
             !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>)
  constexpr BufferView(R& range, MemoryKind memory_kind = MemoryKind::host) noexcept
      : BufferView(std::span(range), memory_kind) {}

  /// Size of the view in bytes.
  [[nodiscard]] std::size_t bytes() const noexcept { return count * size_of(type); }

  /// The same memory, read-only.
  constexpr operator ConstBufferView() const noexcept { return {data, count, type, memory}; }
};

}  // namespace meshcomm
