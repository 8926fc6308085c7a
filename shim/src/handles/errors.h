// Errors on fake and real communicators: raising them through the right handler, and the user
// handler functions the shim records (error_dispatch.cpp).
#pragma once

#include <mpi.h>

namespace rcshim {

// Calls the error handler of comm (fake or real; MPI_COMM_NULL: MPI_COMM_WORLD's) with code
// and returns code. A fake comm's handler gets the fake handle.
int raise_on(MPI_Comm comm, int code);
// A new code of error_class with a formatted message, raised on comm.
int raise_error(MPI_Comm comm, int error_class, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Result of a core call made for fake comm: MPI_SUCCESS, or the code raised on comm.
inline int result(MPI_Comm comm, int rc) { return rc == MPI_SUCCESS ? rc : raise_on(comm, rc); }

// User error handler functions, recorded when the handler is created through the shim.
void remember_errhandler(MPI_Errhandler eh, MPI_Comm_errhandler_function* fn);
// Whether eh ends the program (MPI_ERRORS_ARE_FATAL, and MPI-4's MPI_ERRORS_ABORT).
inline bool fatal_errhandler(MPI_Errhandler eh) {
#ifdef MPI_ERRORS_ABORT
  if (eh == MPI_ERRORS_ABORT) return true;
#endif
  return eh == MPI_ERRORS_ARE_FATAL;
}
// Whether eh is one of MPI's predefined handlers, which MPI never frees: nothing to count.
inline bool predefined_errhandler(MPI_Errhandler eh) {
  return eh == MPI_ERRORS_RETURN || fatal_errhandler(eh);
}
// A fake comm uses eh / no longer does: a count for the program's own handlers.
void hold_program_errhandler(MPI_Errhandler eh);
void release_program_errhandler(MPI_Errhandler eh);
inline void hold_errhandler(MPI_Errhandler eh) {
  if (!predefined_errhandler(eh)) hold_program_errhandler(eh);
}
inline void release_errhandler(MPI_Errhandler eh) {
  if (!predefined_errhandler(eh)) release_program_errhandler(eh);
}

}  // namespace rcshim
