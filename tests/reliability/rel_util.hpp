// Shared helpers of the reliability tests: heap and resident-memory measurements, the leak
// checker when the build has one, error classes and messages.
#pragma once

#include <malloc.h>
#include <mpi.h>
#include <unistd.h>

#include <rangecomm/rangecomm.hpp>

#include <cstddef>
#include <cstdio>
#include <string>

#include "mpi_test.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define RELTEST_SANITIZED 1
#include <sanitizer/lsan_interface.h>
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#else
#define RELTEST_SANITIZED 0
#endif

namespace reltest {

// Bytes held by C++ code through operator new (rangecomm's and the test's, not MPI's, which
// uses malloc). Defined by new_counter.cpp: only programs linked with it may call this.
long long cxx_bytes_in_use();
// Makes the operator new call after the next n fail (throw std::bad_alloc); n < 0 turns the
// injection off. Also defined by new_counter.cpp.
void fail_allocation_after(long long n);

// Bytes the process has allocated and not freed: the sanitizer allocator's count in sanitized
// builds, glibc's otherwise. Both count every live block, MPI's included.
inline long long heap_in_use() {
#if RELTEST_SANITIZED
  return static_cast<long long>(__sanitizer_get_current_allocated_bytes());
#else
  return static_cast<long long>(mallinfo2().uordblks);
#endif
}

// Resident set size in bytes (/proc/self/statm).
inline long long rss_bytes() {
  long long pages_total = 0, pages_resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lld %lld", &pages_total, &pages_resident) != 2) pages_resident = 0;
    std::fclose(f);
  }
  return pages_resident * sysconf(_SC_PAGESIZE);
}

// In sanitized builds, runs LeakSanitizer now and returns true if it found unreachable blocks
// that the suppressions (MPI's own) do not cover; it prints them. Always false elsewhere.
inline bool leaks_found() {
#if RELTEST_SANITIZED
  return __lsan_do_recoverable_leak_check() != 0;
#else
  return false;
#endif
}

inline int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

inline std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  rangecomm::Error_string(code, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

inline rangecomm::Comm world() {
  rangecomm::Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

}  // namespace reltest
