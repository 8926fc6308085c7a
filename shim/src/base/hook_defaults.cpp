// Weak defaults of the two support functions the generated code calls on fake handles; the
// semantics half of the shim defines the real ones (docs/shim-design.md, rule 3).
#include <mpi.h>

#include "shim_hooks.h"

extern "C" __attribute__((weak)) int rc_real_comm_of(MPI_Comm, MPI_Comm* real) {
  *real = MPI_COMM_NULL;
  return MPI_ERR_COMM;  // no table of fake communicators: nothing is a known range
}

extern "C" __attribute__((weak)) int rc_error(MPI_Comm, int error_class, const char*, ...) {
  return error_class;
}
