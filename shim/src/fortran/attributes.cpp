// Attributes from Fortran: keyvals whose callbacks are Fortran subroutines, and values that are
// Fortran integers (docs/shim-design.md, "Fortran"). Made through the Fortran library's own
// binding, so that MPI knows them as Fortran's on real communicators too; the library records
// the callbacks for its own communicators.
#include "fortran/support.h"
#include "fortran_entries.h"
#include "handles/fortran_hooks.h"

namespace {

using KeyvalCreate = void (*)(void* copy, void* del, MPI_Fint* keyval, void* extra, MPI_Fint* ierr);
using GetAttr = void (*)(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* flag,
                         MPI_Fint* ierr);
using SetAttr = void (*)(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* ierr);

// An attribute of a real communicator as MPI_COMM_GET_ATTR gives it to Fortran.
int read_real(MPI_Comm comm, int keyval, MPI_Aint* value, int* flag) {
  MPI_Fint handle = MPI_Comm_c2f(comm), key = keyval, found = 0, ierr = MPI_SUCCESS;
  reinterpret_cast<GetAttr>(RC_F_REAL(MPI_Comm_get_attr))(&handle, &key, value, &found, &ierr);
  *flag = found != 0;
  return ierr;
}

// The C keyval of a keyval from Fortran: MPICH numbers Fortran's predefined ones one above C's.
int c_keyval(int keyval) {
#if defined(MPICH_VERSION)
  for (int predefined : {MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE,
                         MPI_LASTUSEDCODE, MPI_APPNUM})
    if (keyval == predefined + 1) return predefined;
#endif
  return keyval;
}

// (ierr is null where an mpi_f08 program leaves its optional IERROR out.)
template <int Index>
void create_keyval(void* copy, void* del, MPI_Fint* keyval, void* extra, MPI_Fint* ierr,
                   bool mpi1) {
  MPI_Fint rc = MPI_SUCCESS;
  reinterpret_cast<KeyvalCreate>(rc_f_real(Index))(copy, del, keyval, extra, &rc);
  if (ierr != nullptr) *ierr = rc;
  if (rc != MPI_SUCCESS) return;
  MPI_Aint value = mpi1 ? *static_cast<MPI_Fint*>(extra) : *static_cast<MPI_Aint*>(extra);
  rc_fortran_keyval_made(*keyval, copy, del, value, mpi1, &read_real);
}

template <int Index>
void get_attr(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* flag, MPI_Fint* ierr,
              bool mpi1) {
  if (!rc_is_fake_fortran_comm(*comm))
    return reinterpret_cast<GetAttr>(rc_f_real(Index))(comm, keyval, value, flag, ierr);
  MPI_Aint v = 0;
  int found = 0;
  int rc = rc_fortran_comm_get_attr(MPI_Comm_f2c(*comm), c_keyval(*keyval), &v, &found);
  if (ierr != nullptr) *ierr = rc;
  if (rc != MPI_SUCCESS) return;
  *flag = rcshim::fortran_logical(found != 0);
  if (!found) return;
  if (mpi1)
    *static_cast<MPI_Fint*>(value) = static_cast<MPI_Fint>(v);
  else
    *static_cast<MPI_Aint*>(value) = v;
}

template <int Index>
void set_attr(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* ierr, bool mpi1) {
  if (!rc_is_fake_fortran_comm(*comm))
    return reinterpret_cast<SetAttr>(rc_f_real(Index))(comm, keyval, value, ierr);
  MPI_Aint v = mpi1 ? *static_cast<MPI_Fint*>(value) : *static_cast<MPI_Aint*>(value);
  int rc = rc_fortran_comm_set_attr(MPI_Comm_f2c(*comm), c_keyval(*keyval), v, mpi1);
  if (ierr != nullptr) *ierr = rc;
}

}  // namespace

// MPI_COMM_CREATE_KEYVAL(COMM_COPY_ATTR_FN, COMM_DELETE_ATTR_FN, COMM_KEYVAL, EXTRA_STATE, IERROR)
#if defined(RC_F_INDEX_MPI_Comm_create_keyval)
extern "C" void rc_f_hand_MPI_Comm_create_keyval(void* copy, void* del, MPI_Fint* keyval,
                                                 MPI_Aint* extra, MPI_Fint* ierr) {
  create_keyval<RC_F_INDEX_MPI_Comm_create_keyval>(copy, del, keyval, extra, ierr, false);
}
RC_F_HAND_NAMES(MPI_Comm_create_keyval)
#endif

// MPI_KEYVAL_CREATE(COPY_FN, DELETE_FN, KEYVAL, EXTRA_STATE, IERROR), all INTEGER
#if defined(RC_F_INDEX_MPI_Keyval_create)
extern "C" void rc_f_hand_MPI_Keyval_create(void* copy, void* del, MPI_Fint* keyval,
                                            MPI_Fint* extra, MPI_Fint* ierr) {
  create_keyval<RC_F_INDEX_MPI_Keyval_create>(copy, del, keyval, extra, ierr, true);
}
RC_F_HAND_NAMES(MPI_Keyval_create)
#endif

// MPI_COMM_GET_ATTR(COMM, COMM_KEYVAL, ATTRIBUTE_VAL, FLAG, IERROR), the value
// INTEGER(KIND=MPI_ADDRESS_KIND); MPI_ATTR_GET the same with an INTEGER.
#if defined(RC_F_INDEX_MPI_Comm_get_attr)
extern "C" void rc_f_hand_MPI_Comm_get_attr(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value,
                                            MPI_Fint* flag, MPI_Fint* ierr) {
  get_attr<RC_F_INDEX_MPI_Comm_get_attr>(comm, keyval, value, flag, ierr, false);
}
RC_F_HAND_NAMES(MPI_Comm_get_attr)
#endif

#if defined(RC_F_INDEX_MPI_Attr_get)
extern "C" void rc_f_hand_MPI_Attr_get(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value,
                                       MPI_Fint* flag, MPI_Fint* ierr) {
  get_attr<RC_F_INDEX_MPI_Attr_get>(comm, keyval, value, flag, ierr, true);
}
RC_F_HAND_NAMES(MPI_Attr_get)
#endif

// MPI_COMM_SET_ATTR(COMM, COMM_KEYVAL, ATTRIBUTE_VAL, IERROR); MPI_ATTR_PUT with an INTEGER.
#if defined(RC_F_INDEX_MPI_Comm_set_attr)
extern "C" void rc_f_hand_MPI_Comm_set_attr(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value,
                                            MPI_Fint* ierr) {
  set_attr<RC_F_INDEX_MPI_Comm_set_attr>(comm, keyval, value, ierr, false);
}
RC_F_HAND_NAMES(MPI_Comm_set_attr)
#endif

#if defined(RC_F_INDEX_MPI_Attr_put)
extern "C" void rc_f_hand_MPI_Attr_put(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value,
                                       MPI_Fint* ierr) {
  set_attr<RC_F_INDEX_MPI_Attr_put>(comm, keyval, value, ierr, true);
}
RC_F_HAND_NAMES(MPI_Attr_put)
#endif

// MPICH's mpi_f08 procedures of the same calls (Open MPI's mpi_f08 calls the functions above).
#if defined(RC_F_INDEX_F08_MPI_Comm_create_keyval)
extern "C" RC_EXPORT void mpi_comm_create_keyval_f08_(void* copy, void* del, MPI_Fint* keyval,
                                                      MPI_Aint* extra, MPI_Fint* ierr) {
  create_keyval<RC_F_INDEX_F08_MPI_Comm_create_keyval>(copy, del, keyval, extra, ierr, false);
}
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_get_attr)
extern "C" RC_EXPORT void mpi_comm_get_attr_f08_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value,
                                                 MPI_Fint* flag, MPI_Fint* ierr) {
  get_attr<RC_F_INDEX_F08_MPI_Comm_get_attr>(comm, keyval, value, flag, ierr, false);
}
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_set_attr)
extern "C" RC_EXPORT void mpi_comm_set_attr_f08_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value,
                                                 MPI_Fint* ierr) {
  set_attr<RC_F_INDEX_F08_MPI_Comm_set_attr>(comm, keyval, value, ierr, false);
}
#endif
