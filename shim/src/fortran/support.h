// What the library's Fortran entry points share (docs/shim-design.md, "Fortran"): the table of
// the Fortran library's own bindings, where real handles go, and the conversions of the path
// that takes library handles: Fortran's sentinels, strings, statuses and counting from 1.
#pragma once

#include <mpi.h>
#include <stddef.h>

#include <atomic>
#include <string>
#include <vector>

#include "base/fake_handles.h"
#include "real_mpi.h"

// The conversions of handles the library never makes are MPI's, reached through the table of
// real functions like every other call of MPI the library makes (MPICH's are macros).
#if defined(RC_HAVE_MPI_Type_f2c)
#define MPI_Type_f2c rc_real.MPI_Type_f2c
#endif
#if defined(RC_HAVE_MPI_Type_c2f)
#define MPI_Type_c2f rc_real.MPI_Type_c2f
#endif
#if defined(RC_HAVE_MPI_Op_f2c)
#define MPI_Op_f2c rc_real.MPI_Op_f2c
#endif
#if defined(RC_HAVE_MPI_Op_c2f)
#define MPI_Op_c2f rc_real.MPI_Op_c2f
#endif
#if defined(RC_HAVE_MPI_Info_f2c)
#define MPI_Info_f2c rc_real.MPI_Info_f2c
#endif
#if defined(RC_HAVE_MPI_Info_c2f)
#define MPI_Info_c2f rc_real.MPI_Info_c2f
#endif
#if defined(RC_HAVE_MPI_Group_f2c)
#define MPI_Group_f2c rc_real.MPI_Group_f2c
#endif
#if defined(RC_HAVE_MPI_Group_c2f)
#define MPI_Group_c2f rc_real.MPI_Group_c2f
#endif
#if defined(RC_HAVE_MPI_Errhandler_f2c)
#define MPI_Errhandler_f2c rc_real.MPI_Errhandler_f2c
#endif
#if defined(RC_HAVE_MPI_Errhandler_c2f)
#define MPI_Errhandler_c2f rc_real.MPI_Errhandler_c2f
#endif
#if defined(RC_HAVE_MPI_Win_f2c)
#define MPI_Win_f2c rc_real.MPI_Win_f2c
#endif
#if defined(RC_HAVE_MPI_Win_c2f)
#define MPI_Win_c2f rc_real.MPI_Win_c2f
#endif
#if defined(RC_HAVE_MPI_File_f2c)
#define MPI_File_f2c rc_real.MPI_File_f2c
#endif
#if defined(RC_HAVE_MPI_File_c2f)
#define MPI_File_c2f rc_real.MPI_File_c2f
#endif
#if defined(RC_HAVE_MPI_Session_f2c)
#define MPI_Session_f2c rc_real.MPI_Session_f2c
#endif
#if defined(RC_HAVE_MPI_Session_c2f)
#define MPI_Session_c2f rc_real.MPI_Session_c2f
#endif

#define RC_EXPORT __attribute__((visibility("default")))
#define RC_COLD __attribute__((cold, noinline))
#define RC_UNLIKELY(x) __builtin_expect(!!(x), 0)

// Exports the hand-written entry rc_f_hand_<fn> under every name of the Fortran library's
// binding of `fn` (RC_F_NAMES_<fn>, fortran_entries.h).
#define RC_F_HAND_NAMES(fn) RC_F_NAMES_##fn(RC_F_HAND_NAME, rc_f_hand_##fn)
#define RC_F_HAND_NAME(name, entry) \
  extern "C" RC_EXPORT decltype(entry) name __attribute__((alias(#entry)));

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed to C as int");

// The Fortran library's binding number `index` (fortran_entries.h), looked up after the library
// the first time it is needed.
extern "C" std::atomic<void*> rc_f_real_table[];
extern "C" void* rc_f_resolve(int index);
static inline void* rc_f_real(int index) {
  void* fn = rc_f_real_table[index].load(std::memory_order_relaxed);
  return fn != nullptr ? fn : rc_f_resolve(index);
}

// MPICH's MPIX_Stream is an int handle without conversion functions.
#if defined(MPIX_STREAM_NULL)
static inline MPIX_Stream MPIX_Stream_f2c(MPI_Fint f) { return (MPIX_Stream)f; }
static inline MPI_Fint MPIX_Stream_c2f(MPIX_Stream s) { return (MPI_Fint)s; }
#endif

namespace rcshim {

// MPI_BOTTOM and MPI_IN_PLACE of Fortran (addresses of the MPI's Fortran variables) as C's.
void* fortran_buffer(void* buffer);
// Whether fn is the MPI's Fortran MPI_COMM_NULL_COPY_FN or MPI_NULL_COPY_FN (mpif.h's in each
// name form, or mpi_f08's): a procedure that copies nothing.
bool fortran_null_copy_fn(const void* fn);
// MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY of Fortran as C's.
int* fortran_weights(MPI_Fint* weights);
// A count from Fortran as a length (MPI reports a negative one).
inline size_t fortran_count(MPI_Fint n) { return n > 0 ? static_cast<size_t>(n) : 0; }
// Indices C numbers from 0, for Fortran (from 1).
void fortran_indices(MPI_Fint* indices, MPI_Fint n);
// Fortran's .TRUE. and .FALSE. (gfortran's: 1 and 0).
MPI_Fint fortran_logical(bool value);
// The length of an array given per process of `comm`: all of them (the remote group of an
// intercommunicator), or the sources or destinations of its topology.
enum class Peers { all, sources, destinations };
MPI_Fint fortran_peers(MPI_Comm comm, Peers which);

// A Fortran string argument as a C string: without its trailing (and leading) blanks.
class FortranString {
 public:
  FortranString(const char* text, size_t length);
  const char* c_str() const { return text_.c_str(); }

 private:
  std::string text_;
};

// A Fortran string result: C writes into buffer(), copy_out() blank-pads it into the argument.
class FortranStringOut {
 public:
  FortranStringOut(char* out, size_t length);
  char* buffer() { return buffer_.data(); }
  void copy_out();

 private:
  char* out_;
  size_t length_;
  std::vector<char> buffer_;
};

// Fortran statuses (INTEGER arrays of MPI_STATUS_SIZE) as C's: `count` of them, or C's
// MPI_STATUS(ES)_IGNORE where the argument is Fortran's.
class FortranStatuses {
 public:
  FortranStatuses(MPI_Fint* out, MPI_Fint count, bool array);
  MPI_Status* get() { return out_ == nullptr ? ignore_ : statuses_.data(); }
  // Writes the first `written` (none if negative: MPI_UNDEFINED).
  void copy_out(MPI_Fint written);

 private:
  MPI_Fint* out_;  // null: ignored
  MPI_Status* ignore_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace rcshim
