// Open MPI only: reserves the address range of fake handles (fake_handles.h) at start-up, so
// that no object Open MPI allocates can ever have a fake handle's address, and a fake handle
// that leaks into Open MPI faults at once on a page that /proc/self/maps shows as ours.
#include "base/fake_handles.h"

#if defined(OPEN_MPI)
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(RC_FAKE_BASE_DYNAMIC)
extern "C" {
__attribute__((visibility("default"))) uintptr_t rc_fake_base = 0;  // set once, before main
}
#endif

namespace {

__attribute__((constructor(101))) void reserve_fake_region() {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
#if defined(RC_FAKE_BASE_DYNAMIC)
  void* at = mmap(nullptr, RC_FAKE_REGION_BYTES, PROT_NONE, flags, -1, 0);
  if (at != MAP_FAILED) {
    rc_fake_base = (uintptr_t)at;
    return;
  }
  int error = errno;
  void* want = nullptr;
#else
  void* want = (void*)RC_FAKE_BASE_FIXED;
  void* at = mmap(want, RC_FAKE_REGION_BYTES, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
  if (at == want) return;
  int error = errno;
  // A kernel older than 4.17 ignores MAP_FIXED_NOREPLACE and maps elsewhere: not ours to use.
  if (at != MAP_FAILED) {
    munmap(at, RC_FAKE_REGION_BYTES);
    error = EEXIST;
  }
#endif
  std::fprintf(stderr,
               "librangecomm: cannot reserve the %llu-byte address range of fake MPI handles at "
               "%p: %s. Something else is mapped there; rebuild the shim with "
               "-DRC_FAKE_BASE_DYNAMIC to let the kernel choose the address.\n",
               (unsigned long long)RC_FAKE_REGION_BYTES, want, std::strerror(error));
  std::abort();
}

}  // namespace
#endif
