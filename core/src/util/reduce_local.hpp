// out := in op out, element by element (MPI_Reduce_local), for the collectives' local steps.
#pragma once

#include <mpi.h>

namespace rangecomm::detail {

// Short vectors of the common predefined pairs (MPI_SUM and MPI_PROD on the C integer and
// floating types, MPI_MAX and MPI_MIN on the signed integer ones) are reduced here: in Open MPI
// 4.1 MPI_Reduce_local's argument checks and dispatch cost about 170 instructions, more than the
// arithmetic of a few elements. Every other case, and longer vectors (MPI's kernels are
// vectorised), go to MPI_Reduce_local. The result is bit for bit MPI's (integer sums and
// products wrap around, as in MPI libraries).
int reduce_local(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op);

// Up to how many elements reduce_local does the arithmetic itself.
constexpr int kReduceLocalInlineCount = 64;

}  // namespace rangecomm::detail
