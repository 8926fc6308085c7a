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
void hold_errhandler(MPI_Errhandler eh);     // a fake comm uses it
void release_errhandler(MPI_Errhandler eh);  // it no longer does

}  // namespace rcshim
