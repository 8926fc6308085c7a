// Replaces the global operator new and delete of a test program to count the bytes that C++
// code holds: rangecomm's (and the test's own), never the MPI library's, which allocates with
// malloc. Link it into a test program to use reltest::cxx_bytes_in_use() (rel_util.hpp).
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

// Each block starts with a header holding its size; 16 bytes keep the user part aligned for
// every fundamental type (over-aligned types use the aligned forms, which are not replaced).
constexpr std::size_t kHeader = 16;
std::atomic<long long> g_live{0};
std::atomic<long long> g_fail_at{-1};  // allocations left before one fails; -1: never

void* allocate(std::size_t size) {
  if (g_fail_at.load(std::memory_order_relaxed) >= 0 &&
      g_fail_at.fetch_sub(1, std::memory_order_relaxed) == 0)
    return nullptr;  // an injected out-of-memory (reltest::fail_allocation_after)
  void* raw = std::malloc(size + kHeader);
  if (!raw) return nullptr;
  *static_cast<std::size_t*>(raw) = size;
  g_live.fetch_add(static_cast<long long>(size), std::memory_order_relaxed);
  return static_cast<char*>(raw) + kHeader;
}

void release(void* p) noexcept {
  if (!p) return;
  void* raw = static_cast<char*>(p) - kHeader;
  g_live.fetch_sub(static_cast<long long>(*static_cast<std::size_t*>(raw)),
                   std::memory_order_relaxed);
  std::free(raw);
}

void* allocate_or_throw(std::size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace reltest {
long long cxx_bytes_in_use() { return g_live.load(std::memory_order_relaxed); }
void fail_allocation_after(long long n) { g_fail_at.store(n, std::memory_order_relaxed); }
}  // namespace reltest

void* operator new(std::size_t size) { return allocate_or_throw(size); }
void* operator new[](std::size_t size) { return allocate_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
