#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace meshcomm::detail {

/// A free list of equal-sized blocks, one per thread and per block type: what an operation or a
/// collective allocates on every call comes back from here, a pop instead of a trip through
/// malloc. Blocks freed on another thread join that thread's list; each list keeps at most
/// kBlocks, handing the rest back to the heap, and frees what it holds as its thread ends
/// (blocks given back later, as the thread or the process ends, go straight to the heap).
template <typename Block>
class RecycledBlocks {
 public:
  static constexpr std::size_t kBlocks = 32;
  static_assert(alignof(Block) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "blocks come from plain operator new");

  /// A block of sizeof(Block) bytes, aligned for Block.
  [[nodiscard]] static void* take() {
    Shelf* shelf = shelf_here();
    if (shelf != nullptr && shelf->held > 0) return shelf->blocks[--shelf->held];
    return ::operator new(sizeof(Block));
  }

  /// Gives back a block take() returned, on this thread or another.
  static void give(void* block) noexcept {
    Shelf* shelf = shelf_here();
    if (shelf != nullptr && shelf->held < kBlocks) {
      shelf->blocks[shelf->held++] = block;
    } else {
      ::operator delete(block);
    }
  }

 private:
  struct Shelf {
    std::array<void*, kBlocks> blocks{};
    std::size_t held = 0;
  };
  /// Owns this thread's shelf and frees it, with the blocks on it, as the thread ends.
  struct Sweeper {
    /// Called once a thread has a shelf: the first use constructs this thread's sweeper.
    void arm() noexcept {}
    ~Sweeper() {
      Shelf* shelf = shelf_;
      shelf_ = ended();
      if (shelf == nullptr || shelf == ended()) return;
      for (std::size_t index = 0; index < shelf->held; ++index) ::operator delete(shelf->blocks[index]);
      delete shelf;
    }
  };

  /// What shelf_ holds once its thread is ending: blocks given back then go to the heap.
  static Shelf* ended() noexcept { return reinterpret_cast<Shelf*>(alignof(Shelf)); }

  /// This thread's shelf, made on first use; null once the thread is ending (or if it cannot be
  /// made): then blocks come from and go to the heap.
  static Shelf* shelf_here() noexcept {
    Shelf* shelf = shelf_;
    if (shelf == nullptr) [[unlikely]] {
      shelf = new (std::nothrow) Shelf;
      if (shelf == nullptr) return nullptr;
      shelf_ = shelf;
      sweeper_.arm();
    }
    return shelf == ended() ? nullptr : shelf;
  }

  // Only a pointer in the initial-exec model (a use is then no __tls_get_addr call in
  // libmeshcomm.so): a library that may be loaded with dlopen must keep its static TLS small.
  [[gnu::tls_model("initial-exec")]] static inline thread_local Shelf* shelf_ = nullptr;
  static inline thread_local Sweeper sweeper_;
};

/// An allocator for std::allocate_shared that takes single objects from RecycledBlocks:
/// `std::allocate_shared<Op>(RecyclingAllocator<Op>{}, ...)` costs no malloc once warm.
template <typename T>
struct RecyclingAllocator {
  using value_type = T;

  RecyclingAllocator() noexcept = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>& /*other*/) noexcept {}  // NOLINT: allocate_shared rebinds

  [[nodiscard]] T* allocate(std::size_t count) {
    if (count != 1) return std::allocator<T>{}.allocate(count);
    return static_cast<T*>(RecycledBlocks<T>::take());
  }
  void deallocate(T* pointer, std::size_t count) noexcept {
    if (count != 1) return std::allocator<T>{}.deallocate(pointer, count);
    RecycledBlocks<T>::give(pointer);
  }

  template <typename U>
  bool operator==(const RecyclingAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

/// An allocator for the short lists made on every call (the works of a collective's step): a
/// list of up to `Capacity` elements takes one block of that capacity from RecycledBlocks, a
/// longer one comes from the heap. std::vector gives back each array with the count it asked
/// for, so the two kinds never mix.
template <typename T, std::size_t Capacity>
struct ShortListAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = ShortListAllocator<U, Capacity>;
  };

  ShortListAllocator() noexcept = default;
  template <typename U>
  ShortListAllocator(const ShortListAllocator<U, Capacity>& /*other*/) noexcept {}  // NOLINT: rebinding

  [[nodiscard]] T* allocate(std::size_t count) {
    if (count > Capacity) return std::allocator<T>{}.allocate(count);
    return static_cast<T*>(RecycledBlocks<Block>::take());
  }
  void deallocate(T* pointer, std::size_t count) noexcept {
    if (count > Capacity) return std::allocator<T>{}.deallocate(pointer, count);
    RecycledBlocks<Block>::give(pointer);
  }

  template <typename U>
  bool operator==(const ShortListAllocator<U, Capacity>& /*other*/) const noexcept {
    return true;
  }

 private:
  struct Block {
    alignas(T) std::byte bytes[sizeof(T) * Capacity];
  };
};

/// A shared T made from `arguments` with its memory from RecycledBlocks, for objects made on
/// every call (a send's or receive's operation, a collective's schedule or state).
template <typename T, typename... Arguments>
std::shared_ptr<T> make_recycled(Arguments&&... arguments) {
  return std::allocate_shared<T>(RecyclingAllocator<T>{}, std::forward<Arguments>(arguments)...);
}

}  // namespace meshcomm::detail
