// Filling MPI_Status objects the way MPI does for operations the library completes itself.
#pragma once

#include <mpi.h>

namespace rangecomm::detail {

// status of a receive from `source` with `tag` that delivered `bytes` bytes.
inline void set_status(MPI_Status* st, int source, int tag, MPI_Count bytes, int error) {
  st->MPI_SOURCE = source;
  st->MPI_TAG = tag;
  st->MPI_ERROR = error;
  MPI_Status_set_elements_x(st, MPI_BYTE, bytes);
  MPI_Status_set_cancelled(st, 0);
}

// MPI's empty status: what Wait reports for a null request.
inline void set_empty_status(MPI_Status* st) {
  set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

// The status of an operation with MPI_PROC_NULL.
inline void set_proc_null_status(MPI_Status* st) {
  set_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

inline void set_cancelled_status(MPI_Status* st) {
  set_empty_status(st);
  MPI_Status_set_cancelled(st, 1);
}

}  // namespace rangecomm::detail
