// Attributes from Fortran: keyvals whose callbacks are Fortran subroutines, and values that are
// Fortran integers (docs/shim-design.md, "Fortran"). Made through the Fortran library's own
// binding, so that MPI knows them as Fortran's on real communicators too; the library records
// the callbacks for its own communicators.
#include <type_traits>

#include "fortran/support.h"
#include "fortran_entries.h"
#include "handles/fortran_hooks.h"

namespace {

using KeyvalCreate = void (*)(void* copy, void* del, MPI_Fint* keyval, void* extra, MPI_Fint* ierr);
using GetAttr = void (*)(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* flag,
                         MPI_Fint* ierr);
using SetAttr = void (*)(MPI_Fint* comm, MPI_Fint* keyval, void* value, MPI_Fint* ierr);

// An attribute of a real communicator as MPI_COMM_GET_ATTR gives it to Fortran (none where the
// MPI has no Fortran binding of it: then no keyval is made in Fortran either).
#if defined(RC_F_INDEX_MPI_Comm_get_attr)
int read_real(MPI_Comm comm, int keyval, MPI_Aint* value, int* flag) {
  MPI_Fint handle = MPI_Comm_c2f(comm), key = keyval, found = 0, ierr = MPI_SUCCESS;
  reinterpret_cast<GetAttr>(RC_F_REAL(MPI_Comm_get_attr))(&handle, &key, value, &found, &ierr);
  *flag = found != 0;
  return ierr;
}
constexpr rc_fortran_attr_reader* kReadReal = &read_real;
#else
constexpr rc_fortran_attr_reader* kReadReal = nullptr;
#endif

// The C keyval of a keyval from Fortran: MPICH numbers Fortran's predefined ones one above C's.
int c_keyval(int keyval) {
#if defined(MPICH_VERSION)
  for (int predefined : {MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE,
                         MPI_LASTUSEDCODE, MPI_APPNUM})
    if (keyval == predefined + 1) return predefined;
#endif
  return keyval;
}

// An attribute value (or extra state) of type `Value` is MPI-1's INTEGER, or else
// INTEGER(KIND=MPI_ADDRESS_KIND).
template <typename Value>
constexpr bool kMpi1 = std::is_same<Value, MPI_Fint>::value;

// (ierr is null where an mpi_f08 program leaves its optional IERROR out.)
template <int Index, typename Value>
void create_keyval(void* copy, void* del, MPI_Fint* keyval, Value* extra, MPI_Fint* ierr) {
  MPI_Fint rc = MPI_SUCCESS;
  reinterpret_cast<KeyvalCreate>(rc_f_real(Index))(copy, del, keyval, extra, &rc);
  if (ierr != nullptr) *ierr = rc;
  if (rc != MPI_SUCCESS) return;
  rc_fortran_keyval_made(*keyval, rcshim::fortran_null_copy_fn(copy) ? nullptr : copy, del, *extra,
                         kMpi1<Value>, kReadReal);
}

template <int Index, typename Value>
void get_attr(MPI_Fint* comm, MPI_Fint* keyval, Value* value, MPI_Fint* flag, MPI_Fint* ierr) {
  if (!rc_is_fake_fortran_comm(*comm))
    return reinterpret_cast<GetAttr>(rc_f_real(Index))(comm, keyval, value, flag, ierr);
  MPI_Aint v = 0;
  int found = 0;
  int rc = rc_fortran_comm_get_attr(MPI_Comm_f2c(*comm), c_keyval(*keyval), &v, &found);
  if (ierr != nullptr) *ierr = rc;
  if (rc != MPI_SUCCESS) return;
  *flag = rcshim::fortran_logical(found != 0);
  if (found) *value = static_cast<Value>(v);
}

template <int Index, typename Value>
void set_attr(MPI_Fint* comm, MPI_Fint* keyval, Value* value, MPI_Fint* ierr) {
  if (!rc_is_fake_fortran_comm(*comm))
    return reinterpret_cast<SetAttr>(rc_f_real(Index))(comm, keyval, value, ierr);
  int rc = rc_fortran_comm_set_attr(MPI_Comm_f2c(*comm), c_keyval(*keyval), *value, kMpi1<Value>);
  if (ierr != nullptr) *ierr = rc;
}

}  // namespace

// Each call's entry is rc_f_hand_<fn>, exported under the names of the binding `fn`; MPICH's
// mpi_f08 procedure of the call is the binding F08_<fn> (Open MPI's calls the MPI-2 entry).

// MPI_COMM_CREATE_KEYVAL(COMM_COPY_ATTR_FN, COMM_DELETE_ATTR_FN, COMM_KEYVAL, EXTRA_STATE, IERROR);
// MPI_KEYVAL_CREATE(COPY_FN, DELETE_FN, KEYVAL, EXTRA_STATE, IERROR), all INTEGER.
#define RC_F_CREATE_KEYVAL(fn, Value)                                                   \
  extern "C" void rc_f_hand_##fn(void* copy, void* del, MPI_Fint* keyval, Value* extra, \
                                 MPI_Fint* ierr) {                                      \
    create_keyval<RC_F_INDEX_##fn>(copy, del, keyval, extra, ierr);                     \
  }                                                                                     \
  RC_F_HAND_NAMES(fn)
#if defined(RC_F_INDEX_MPI_Comm_create_keyval)
RC_F_CREATE_KEYVAL(MPI_Comm_create_keyval, MPI_Aint)
#endif
#if defined(RC_F_INDEX_MPI_Keyval_create)
RC_F_CREATE_KEYVAL(MPI_Keyval_create, MPI_Fint)
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_create_keyval)
RC_F_CREATE_KEYVAL(F08_MPI_Comm_create_keyval, MPI_Aint)
#endif

// MPI_COMM_GET_ATTR(COMM, COMM_KEYVAL, ATTRIBUTE_VAL, FLAG, IERROR), the value
// INTEGER(KIND=MPI_ADDRESS_KIND); MPI_ATTR_GET the same with an INTEGER.
#define RC_F_GET_ATTR(fn, Value)                                                                 \
  extern "C" void rc_f_hand_##fn(MPI_Fint* comm, MPI_Fint* keyval, Value* value, MPI_Fint* flag, \
                                 MPI_Fint* ierr) {                                               \
    get_attr<RC_F_INDEX_##fn>(comm, keyval, value, flag, ierr);                                  \
  }                                                                                              \
  RC_F_HAND_NAMES(fn)
#if defined(RC_F_INDEX_MPI_Comm_get_attr)
RC_F_GET_ATTR(MPI_Comm_get_attr, MPI_Aint)
#endif
#if defined(RC_F_INDEX_MPI_Attr_get)
RC_F_GET_ATTR(MPI_Attr_get, MPI_Fint)
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_get_attr)
RC_F_GET_ATTR(F08_MPI_Comm_get_attr, MPI_Aint)
#endif

// MPI_COMM_SET_ATTR(COMM, COMM_KEYVAL, ATTRIBUTE_VAL, IERROR); MPI_ATTR_PUT with an INTEGER.
#define RC_F_SET_ATTR(fn, Value)                                                                   \
  extern "C" void rc_f_hand_##fn(MPI_Fint* comm, MPI_Fint* keyval, Value* value, MPI_Fint* ierr) { \
    set_attr<RC_F_INDEX_##fn>(comm, keyval, value, ierr);                                          \
  }                                                                                                \
  RC_F_HAND_NAMES(fn)
#if defined(RC_F_INDEX_MPI_Comm_set_attr)
RC_F_SET_ATTR(MPI_Comm_set_attr, MPI_Aint)
#endif
#if defined(RC_F_INDEX_MPI_Attr_put)
RC_F_SET_ATTR(MPI_Attr_put, MPI_Fint)
#endif
#if defined(RC_F_INDEX_F08_MPI_Comm_set_attr)
RC_F_SET_ATTR(F08_MPI_Comm_set_attr, MPI_Aint)
#endif
