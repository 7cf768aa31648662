#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <new>

namespace meshcomm::detail {

/// A free list of equal-sized blocks, one per thread and per block type: what a point-to-point
/// operation allocates on every call comes back from here, a pop instead of a trip through
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
    Shelf& shelf = shelf_;
    if (shelf.held > 0) return shelf.blocks[--shelf.held];
    if (!shelf.swept_at_exit) sweeper_.arm();  // the first use on this thread: empty the shelf as it ends
    return ::operator new(sizeof(Block));
  }

  /// Gives back a block take() returned, on this thread or another.
  static void give(void* block) noexcept {
    Shelf& shelf = shelf_;
    if (shelf.held < kBlocks && !shelf.ended) {
      shelf.blocks[shelf.held++] = block;
    } else {
      ::operator delete(block);
    }
  }

 private:
  /// Trivially destructible, so that it stays readable until the thread is gone.
  struct Shelf {
    std::array<void*, kBlocks> blocks;
    std::size_t held;
    bool swept_at_exit;  ///< sweeper_ is armed
    bool ended;          ///< the thread is ending: keep nothing more
  };
  /// Frees the shelf's blocks as its thread ends.
  struct Sweeper {
    void arm() noexcept { shelf_.swept_at_exit = true; }
    ~Sweeper() {
      Shelf& shelf = shelf_;
      for (std::size_t index = 0; index < shelf.held; ++index) ::operator delete(shelf.blocks[index]);
      shelf.held = 0;
      shelf.ended = true;
    }
  };

  // initial-exec: in libmeshcomm.so a thread-local is otherwise a __tls_get_addr call a use.
  [[gnu::tls_model("initial-exec")]] static inline thread_local Shelf shelf_{};
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

}  // namespace meshcomm::detail
