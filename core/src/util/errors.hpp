// Error reporting: MPI error classes with a message, raised through an MPI error handler.
#pragma once

#include <mpi.h>

namespace rangecomm::detail {

// Returns an error code of `error_class` whose MPI_Error_string is the formatted message
// (prefixed "rangecomm: "), after calling the error handler of `comm` with it (skipped for
// MPI_COMM_NULL). With MPI_ERRORS_ARE_FATAL on comm this does not return.
int raise(MPI_Comm comm, int error_class, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// Wraps the failure `code` of an MPI call made on the user's behalf: keeps its class, adds
// what was being done, and raises it through comm's handler.
int raise_mpi_failure(MPI_Comm comm, int code, const char* what);
// The same, where MPI_SUCCESS passes through: inline, as every point-to-point call ends in it
// (the failure's formatting needs a large stack frame, which cost even the successful calls
// about 30 instructions when this was one function).
inline int raise_mpi(MPI_Comm comm, int code, const char* what) {
  return code == MPI_SUCCESS ? code : raise_mpi_failure(comm, code, what);
}

// Calls comm's error handler with code, unless Set_error_handler_calls(false) turned that off.
void call_handler(MPI_Comm comm, int code);

// The message of one of our codes, or null for codes that are not ours (or were reused).
const char* message_of(int code);

}  // namespace rangecomm::detail
