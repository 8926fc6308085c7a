// Error handlers made in Fortran: made through the Fortran library's own binding (MPI calls
// them the Fortran way on real communicators), and recorded so that the library calls them the
// Fortran way on its own, with the Fortran handle of the communicator the error happened on.
#include "fortran/support.h"
#include "fortran_entries.h"
#include "handles/fortran_hooks.h"

namespace {

using Create = void (*)(void* fn, MPI_Fint* errhandler, MPI_Fint* ierr);

// (ierr is null where an mpi_f08 program leaves its optional IERROR out.)
template <int Index>
void create(void* fn, MPI_Fint* errhandler, MPI_Fint* ierr) {
  MPI_Fint rc = MPI_SUCCESS;
  reinterpret_cast<Create>(rc_f_real(Index))(fn, errhandler, &rc);
  if (ierr != nullptr) *ierr = rc;
  if (rc == MPI_SUCCESS) rc_fortran_errhandler_made(MPI_Errhandler_f2c(*errhandler), fn);
}

}  // namespace

// MPI_COMM_CREATE_ERRHANDLER(COMM_ERRHANDLER_FN, ERRHANDLER, IERROR), MPI-1's
// MPI_ERRHANDLER_CREATE(FUNCTION, ERRHANDLER, IERROR), and MPICH's mpi_f08 procedure of the
// first (the binding F08_<fn>): each binding's entry rc_f_hand_<fn>, exported under its names.
#define RC_F_CREATE_ERRHANDLER(fn)                                                       \
  extern "C" void rc_f_hand_##fn(void* function, MPI_Fint* errhandler, MPI_Fint* ierr) { \
    create<RC_F_INDEX_##fn>(function, errhandler, ierr);                                 \
  }                                                                                      \
  RC_F_HAND_NAMES(fn)
#if defined(RC_F_INDEX_MPI_Comm_create_errhandler)
RC_F_CREATE_ERRHANDLER(MPI_Comm_create_errhandler)
#endif
#if defined(RC_F_INDEX_MPI_Errhandler_create)
RC_F_CREATE_ERRHANDLER(MPI_Errhandler_create)
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_create_errhandler)
RC_F_CREATE_ERRHANDLER(F08_MPI_Comm_create_errhandler)
#endif
