// MPI_Op_free: a program may free a user operation while nonblocking collectives still use it.
// For collectives on ranges, core runs the reductions itself, so it must keep the operation
// until they are done (rangecomm::Defer_op_free). MPI_Op_free takes no handle the generator
// knows, so it is defined here (exported like the generated wrappers).
#include "handles/handles.h"
#include "rangecomm/embedding.hpp"

#undef MPI_Op_free
#undef PMPI_Op_free

extern "C" __attribute__((visibility("default"))) int MPI_Op_free(MPI_Op* op) {
  if (op != nullptr && *op != MPI_OP_NULL && rangecomm::Defer_op_free(*op)) {
    *op = MPI_OP_NULL;  // core frees it in MPI after the last collective using it
    return MPI_SUCCESS;
  }
  return rc_real.MPI_Op_free(op);
}

extern "C" __attribute__((visibility("default"), alias("MPI_Op_free"))) int PMPI_Op_free(
    MPI_Op* op);
