/* rangecomm: range communicators behind ordinary MPI handles.
 *
 * Link with -lrangecomm (before -lmpi) or start the program with LD_PRELOAD=librangecomm.so.
 * The communicators these calls make are MPI_Comm handles like any other: every MPI function
 * accepts them (see docs/shim-design.md for what runs natively and what falls back to a real
 * communicator). Errors go through the communicator's error handler, as in MPI. */
#ifndef RANGECOMM_H
#define RANGECOMM_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Local, no communication. Called by members of the range: ranks first, first + stride, ...,
 * <= last of comm. A caller outside the range gets MPI_COMM_NULL. comm may be a range
 * communicator or a real intracommunicator of MPI_COMM_WORLD's processes: O(1) when its ranks
 * are an increasing arithmetic progression of world ranks (MPI_COMM_WORLD, its dups,
 * order-keeping splits), O(size of the range) otherwise (the members are then a general group
 * of the world; the real communicator's world ranks are computed once and cached on it).
 * Errors: MPI_ERR_ARG (stride < 1, first > last), MPI_ERR_RANK (outside comm), MPI_ERR_COMM
 * (a communicator that cannot hold ranges, or a live communicator that cannot be told apart
 * from the new one; see docs/tag-layout.md). */
int MPIX_Comm_create_range(MPI_Comm comm, int first, int last, int stride, MPI_Comm *newcomm);
int PMPIX_Comm_create_range(MPI_Comm comm, int first, int last, int stride, MPI_Comm *newcomm);

/* Nonblocking creation, collective over `group` only (paper 001, Sec. VI), made by each member
 * alone without a message: the request is complete on return (MPI_COMM_NULL for a process
 * outside group). A group that is a strided range of comm (its ranks in comm are first,
 * first + stride, ... in that order) becomes a range communicator, any other (a permutation, an
 * irregular subset) a library communicator with a member table. The k-th creation of one group
 * with one tag is the same communicator at every member. */
int MPIX_Icomm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm,
                            MPI_Request *request);
int PMPIX_Icomm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm,
                             MPI_Request *request);

/* flag = 1 when comm is a communicator of this library, 0 otherwise (also for MPI_COMM_NULL). */
int MPIX_Comm_is_range(MPI_Comm comm, int *flag);
int PMPIX_Comm_is_range(MPI_Comm comm, int *flag);

/* A program that gets the library only through LD_PRELOAD (built without -lrangecomm) can
 * define RANGECOMM_WEAK_SYMBOLS before including this header: the calls are then weak
 * references, bound at start-up to the preloaded library (and null without it). */
#ifdef RANGECOMM_WEAK_SYMBOLS
#pragma weak MPIX_Comm_create_range
#pragma weak MPIX_Icomm_create_group
#pragma weak MPIX_Comm_is_range
#endif

#ifdef __cplusplus
}
#endif

#endif /* RANGECOMM_H */
