// BlockStack: freed memory blocks of one size kept for the next allocation of the same kind.
#pragma once

#include <cstddef>

namespace rangecomm::detail {

// For objects that a program makes and frees in loops (range states, running collectives):
// the next one takes a kept block instead of calling the allocator. An aggregate, so a
// namespace-scope `BlockStack<N> x{};` is constant-initialised and trivially destroyed: there
// before any constructor runs and after every destructor, with no guard to check on each use,
// and leak checkers see its blocks as reachable. Like the rest of core, it assumes serialised
// calls; a sanitiser cannot see a use after free of a kept block.
template <std::size_t Capacity>
struct BlockStack {
  void* blocks[Capacity];
  std::size_t count;

  // A kept block, or null when there is none.
  void* take() { return count > 0 ? blocks[--count] : nullptr; }
  // Keeps p; false (p not kept) when the stack is full.
  bool keep(void* p) {
    if (count == Capacity) return false;
    blocks[count++] = p;
    return true;
  }
};

// A base that gives class T an operator new and delete recycling up to Capacity blocks of
// sizeof(T) (running collectives, relays): a warm program then calls the allocator for none.
template <class T, std::size_t Capacity>
struct Recycled {
  static void* operator new(std::size_t bytes) {
    if (bytes == sizeof(T))
      if (void* kept = spare.take()) return kept;
    return ::operator new(bytes);
  }
  static void operator delete(void* p, std::size_t bytes) noexcept {
    if (bytes == sizeof(T) && spare.keep(p)) return;
    ::operator delete(p);
  }
  static inline BlockStack<Capacity> spare{};
};

}  // namespace rangecomm::detail
