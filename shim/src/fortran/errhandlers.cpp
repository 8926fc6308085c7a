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

// MPI_COMM_CREATE_ERRHANDLER(COMM_ERRHANDLER_FN, ERRHANDLER, IERROR), and MPI-1's
// MPI_ERRHANDLER_CREATE(FUNCTION, ERRHANDLER, IERROR).
#if defined(RC_F_INDEX_MPI_Comm_create_errhandler)
extern "C" void rc_f_hand_MPI_Comm_create_errhandler(void* fn, MPI_Fint* errhandler,
                                                     MPI_Fint* ierr) {
  create<RC_F_INDEX_MPI_Comm_create_errhandler>(fn, errhandler, ierr);
}
RC_F_HAND_NAMES(MPI_Comm_create_errhandler)
#endif

#if defined(RC_F_INDEX_MPI_Errhandler_create)
extern "C" void rc_f_hand_MPI_Errhandler_create(void* fn, MPI_Fint* errhandler, MPI_Fint* ierr) {
  create<RC_F_INDEX_MPI_Errhandler_create>(fn, errhandler, ierr);
}
RC_F_HAND_NAMES(MPI_Errhandler_create)
#endif

// MPICH's mpi_f08 procedure of the same call.
#if defined(RC_F_INDEX_F08_MPI_Comm_create_errhandler)
extern "C" RC_EXPORT void mpi_comm_create_errhandler_f08_(void* fn, MPI_Fint* errhandler,
                                                          MPI_Fint* ierr) {
  create<RC_F_INDEX_F08_MPI_Comm_create_errhandler>(fn, errhandler, ierr);
}
#endif
