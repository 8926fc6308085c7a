// MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran. Their arguments are arrays of
// Fortran strings, which MPI's own binding converts; on a library communicator the library
// gives that binding the range's real communicator, over the same processes (spawning is
// collective over them), and keeps the library handle away from it.
#include "base/library_lock.h"
#include "fortran/support.h"
#include "fortran_entries.h"
#include "shim_hooks.h"

#if defined(RC_F_INDEX_MPI_Comm_spawn) || defined(RC_F_INDEX_MPI_Comm_spawn_multiple)
namespace {

// The Fortran handle to give MPI's binding for `comm`: itself, or for a library communicator
// the real communicator over its range's processes. False, with the error in *ierr (which an
// mpi_f08 caller may leave out), where there is none.
bool real_for(MPI_Fint comm, MPI_Fint* real, MPI_Fint* ierr) {
  *real = comm;
  if (!RC_UNLIKELY(rc_is_fake_fortran_comm(comm))) return true;
  MPI_Comm c = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  {
    rcshim::Locked locked;
    rc = rc_real_comm_of(MPI_Comm_f2c(comm), &c);
  }
  if (rc != MPI_SUCCESS) {
    if (ierr != nullptr) *ierr = rc;
    return false;
  }
  *real = MPI_Comm_c2f(c);
  return true;
}

}  // namespace
#endif

// MPI_COMM_SPAWN(COMMAND, ARGV, MAXPROCS, INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES,
// IERROR), COMMAND and ARGV(*) CHARACTER*(*)
#if defined(RC_F_INDEX_MPI_Comm_spawn)
extern "C" void rc_f_hand_MPI_Comm_spawn(char* command, char* argv, MPI_Fint* maxprocs,
                                         MPI_Fint* info, MPI_Fint* root, MPI_Fint* comm,
                                         MPI_Fint* intercomm, MPI_Fint* errcodes, MPI_Fint* ierr,
                                         size_t command_len, size_t argv_len) {
  using Fn = void (*)(char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                      MPI_Fint*, MPI_Fint*, size_t, size_t);
  MPI_Fint real = *comm;
  if (!real_for(*comm, &real, ierr)) return;
  reinterpret_cast<Fn>(RC_F_REAL(MPI_Comm_spawn))(command, argv, maxprocs, info, root, &real,
                                                  intercomm, errcodes, ierr, command_len, argv_len);
}
RC_F_HAND_NAMES(MPI_Comm_spawn)
#endif

// MPI_COMM_SPAWN_MULTIPLE(COUNT, ARRAY_OF_COMMANDS, ARRAY_OF_ARGV, ARRAY_OF_MAXPROCS,
// ARRAY_OF_INFO, ROOT, COMM, INTERCOMM, ARRAY_OF_ERRCODES, IERROR)
#if defined(RC_F_INDEX_MPI_Comm_spawn_multiple)
extern "C" void rc_f_hand_MPI_Comm_spawn_multiple(MPI_Fint* count, char* commands, char* argv,
                                                  MPI_Fint* maxprocs, MPI_Fint* infos,
                                                  MPI_Fint* root, MPI_Fint* comm,
                                                  MPI_Fint* intercomm, MPI_Fint* errcodes,
                                                  MPI_Fint* ierr, size_t commands_len,
                                                  size_t argv_len) {
  using Fn = void (*)(MPI_Fint*, char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                      MPI_Fint*, MPI_Fint*, MPI_Fint*, size_t, size_t);
  MPI_Fint real = *comm;
  if (!real_for(*comm, &real, ierr)) return;
  reinterpret_cast<Fn>(RC_F_REAL(MPI_Comm_spawn_multiple))(count, commands, argv, maxprocs, infos,
                                                           root, &real, intercomm, errcodes, ierr,
                                                           commands_len, argv_len);
}
RC_F_HAND_NAMES(MPI_Comm_spawn_multiple)
#endif
