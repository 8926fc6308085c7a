// RANGECOMM_REPORT=1: what each creation call made, in the library or through MPI, and why MPI
// had to (docs/preload.md). Printed once per job at MPI_Finalize, summed over the processes.
// Without the variable every count is one predictable branch on a flag read at MPI_Init.
#pragma once

#include <mpi.h>

namespace rcshim {

enum class Creation {
  dup,
  dup_with_info,
  idup,
  idup_with_info,
  split,
  split_type,
  create,
  create_group,
  intercomm_merge,
  create_from_group,
  mpix_create_range,
  mpix_icreate_group,
  count
};

// Why a creation went to MPI.
enum class Why {
  mode_off,         // RANGECOMM_MODE is neither accelerate nor shadow
  intercomm,        // the parent or the result is an intercommunicator
  outside_world,    // processes outside MPI_COMM_WORLD (spawned, connected)
  split_type,       // a split type the library does not compute (MPI splits, shadow replaces)
  mpi_checks,       // arguments MPI must check and report (negative colour, bad group or tag)
  not_parent_call,  // a creation the library leaves to MPI in this mode (merges, from groups)
  topology,         // a dup of a communicator with a topology, which the copy must keep
  inside_mpi,       // made by MPI's own code inside another MPI call (ROMIO in MPICH's split)
  handle_table,     // a member's table of communicator handles is (nearly) full
  count
};

extern int g_report;
void read_report();

void count_library(Creation c);
void count_mpi(Creation c, Why why);

// The counted result of a creation: newcomm made by the library (or MPI's, replaced by the
// library's) when `library`, else by MPI for reason `why`. Only successes that gave this
// process a communicator count.
inline int reported(Creation c, bool library, Why why, int rc, const MPI_Comm* newcomm) {
  if (__builtin_expect(g_report, 0) && rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
    if (library)
      count_library(c);
    else
      count_mpi(c, why);
  }
  return rc;
}

// Collective over MPI_COMM_WORLD at MPI_Finalize: rank 0 prints the sums to standard error.
void print_report();

}  // namespace rcshim
