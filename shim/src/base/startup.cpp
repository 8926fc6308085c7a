// Start-up of librangecomm.so: fills the table of real MPI functions before anything else
// runs (constructor priority 101, ahead of every default-priority constructor and of main).
#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "real_mpi.h"

namespace {

void* g_real_library = nullptr;  // set only when RTLD_NEXT cannot see the MPI library

// RTLD_NEXT finds the first definition after this library in search order: the real MPI
// library, whether we are linked before it or preloaded.
void* lookup_next(const char* name) {
  if (g_real_library != nullptr) return dlsym(g_real_library, name);
  return dlsym(RTLD_NEXT, name);
}

void* lookup_nothing(const char*) { return nullptr; }

// Loaded by dlopen after the MPI library (e.g. from a plugin), RTLD_NEXT sees nothing: find the
// loaded object, other than this one, that defines PMPI_Init.
int find_mpi_object(struct dl_phdr_info* info, size_t, void* self_path) {
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == '\0' || std::strcmp(path, (const char*)self_path) == 0) {
    return 0;
  }
  void* handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  if (dlsym(handle, "PMPI_Init") != nullptr) {
    g_real_library = handle;
    return 1;
  }
  dlclose(handle);
  return 0;
}

__attribute__((constructor(101))) void fill_real_table() {
  if (dlsym(RTLD_NEXT, "PMPI_Init") == nullptr) {
    Dl_info self;
    if (dladdr((void*)&fill_real_table, &self) != 0) {
      dl_iterate_phdr(find_mpi_object, (void*)self.dli_fname);
    }
    if (g_real_library == nullptr) {
      // Preloaded into a process without MPI (mpiexec itself, a shell): stay inert; an MPI
      // call would reach a stub that names the missing function.
      rc_real_fill(lookup_nothing);
      return;
    }
  }
  rc_real_fill(lookup_next);
}

}  // namespace
