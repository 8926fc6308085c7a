// The simulated build's MPI: SimGrid's SMPI, with what the library needs that SMPI lacks or gets
// wrong supplied here. Only the simulated build sees this file: its compiler is told to include
// it first in every source (sim/compat/meson.build), so the library's own calls to the names
// below reach these functions, and nothing in core/ or sort/ knows a simulator exists.
//
// What is replaced, and why (SimGrid 4.0, Debian 13):
// - Matched probes. MPI_Improbe, MPI_Mprobe, MPI_Imrecv and MPI_Mrecv abort with "Not yet
//   implemented". A matched probe here takes the message out of SMPI's queue at once (a probe,
//   then a receive of its bytes), which is what MPI says a matched probe does; the receive of
//   the message handle then delivers those bytes through a message to self on a private
//   communicator, so SMPI's own datatype code unpacks them, counts them and reports truncation.
// - MPI_Add_error_string takes a char* (MPI-2's signature); MPI-3 made it const.
// - MPI_Comm_call_errhandler on a communicator whose handler is MPI_ERRORS_RETURN calls a null
//   function; MPI says it returns. (MPI_ERRORS_ARE_FATAL aborts, a user's handler is called.)
// - MPI_Type_dup of a vector type makes a type whose stride is counted twice (a vector of 6 ints
//   with stride 2 packs elements 0, 8, 16, ... and reads past the buffer), and a contiguous type
//   of one such vector moves wrong data too. The library duplicates a type only to hold it while
//   a nonblocking collective runs, so here a duplicate is the same handle with a count of holders,
//   and MPI_Type_free frees a type only when its last holder lets it go (the type's attributes
//   and name are therefore shared, not copied).
// - Not a defect but a difference: every simulated process runs in one OS process, so they
//   share one environment, and a process that sets a variable (the tests force an algorithm
//   so) would change it for all. Here each simulated process has its own: getenv, setenv and
//   unsetenv see the process's own settings over the environment the program started with.
// - MPI_Test on MPI_REQUEST_NULL with MPI_STATUS_IGNORE leaves *flag unset; MPI says true.
// - Not a defect but a model: SMPI's nonblocking collectives are linear, every process sending
//   to and receiving from every other at once (MPI_Iallreduce, MPI_Iscan, MPI_Iexscan) or the
//   root to every process (MPI_Ibcast). A real MPI runs them as trees and recursive doubling in
//   log p rounds, and the linear ones make the simulator handle p^2 messages. Here those four
//   run MPICH's schedules of them (smpi_requests.cpp) on every intracommunicator and type
//   without gaps; SMPI's own run otherwise. Their requests pass through the test and wait calls
//   below, which drive them.
// - Not a defect but a cost model: SMPI charges a test's simulated time (smpi/test) once per
//   request it tests, where a real MPI's test makes one progress pass, however many requests
//   it tests. With RANGECOMM_SIM_TEST_COST set (seconds; the scaling runs set it, and
//   smpi/test to 0), every MPI_Test, MPI_Testall, MPI_Testany and MPI_Testsome costs that once,
//   whatever it tests.
#ifndef RANGECOMM_SIM_SMPI_COMPAT_H
#define RANGECOMM_SIM_SMPI_COMPAT_H

#include <mpi.h>
#include <stdlib.h>
#ifdef __cplusplus
#include <cstdlib>
#endif

#ifdef __cplusplus
extern "C" {
#endif

int rc_smpi_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                    MPI_Status* status);
int rc_smpi_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int rc_smpi_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                   MPI_Request* request);
int rc_smpi_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                  MPI_Status* status);
int rc_smpi_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                   MPI_Request* request);
int rc_smpi_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request* request);
int rc_smpi_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request* request);
int rc_smpi_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request);
int rc_smpi_Test(MPI_Request* request, int* flag, MPI_Status* status);
int rc_smpi_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int rc_smpi_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int rc_smpi_Testsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]);
int rc_smpi_Wait(MPI_Request* request, MPI_Status* status);
int rc_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int rc_smpi_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int rc_smpi_Waitsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]);
int rc_smpi_Request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int rc_smpi_Request_free(MPI_Request* request);
int rc_smpi_Cancel(MPI_Request* request);
void rc_smpi_progress(void);
// Shared by the layer's files: an empty status from `source` (MPI_ANY_SOURCE for a null request
// or a collective, MPI_PROC_NULL).
void rc_smpi_set_empty_status(MPI_Status* status, int source);
int rc_smpi_Add_error_string(int code, const char* text);
int rc_smpi_Comm_call_errhandler(MPI_Comm comm, int code);
int rc_smpi_Type_dup(MPI_Datatype type, MPI_Datatype* copy);
int rc_smpi_Type_free(MPI_Datatype* type);
char* rc_smpi_getenv(const char* name);
int rc_smpi_setenv(const char* name, const char* value, int overwrite);
int rc_smpi_unsetenv(const char* name);
int rc_smpi_Abort(MPI_Comm comm, int code);

// Called, when set, at the start of every MPI_Comm_create_group (with its group) and
// MPI_Comm_split (with MPI_GROUP_NULL) of this simulated process, before SMPI's own: the scaling
// driver sets it to send the messages real MPI libraries send to agree on a context id, which
// SMPI's creation does not (sim/scaling.cpp, model_*). Null by default: nothing changes.
typedef void (*rc_smpi_creation_hook)(MPI_Comm parent, MPI_Group group, int color, int key);
extern rc_smpi_creation_hook rc_smpi_on_creation;
int rc_smpi_Comm_create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm* out);
int rc_smpi_Comm_split(MPI_Comm parent, int color, int key, MPI_Comm* out);

#ifdef __cplusplus
}
#endif

#ifndef RANGECOMM_SIM_COMPAT_IMPLEMENTATION
#define MPI_Improbe rc_smpi_Improbe
#define MPI_Mprobe rc_smpi_Mprobe
#define MPI_Imrecv rc_smpi_Imrecv
#define MPI_Mrecv rc_smpi_Mrecv
#define MPI_Ibcast rc_smpi_Ibcast
#define MPI_Iallreduce rc_smpi_Iallreduce
#define MPI_Iscan rc_smpi_Iscan
#define MPI_Iexscan rc_smpi_Iexscan
#define MPI_Test rc_smpi_Test
#define MPI_Testall rc_smpi_Testall
#define MPI_Testany rc_smpi_Testany
#define MPI_Testsome rc_smpi_Testsome
#define MPI_Wait rc_smpi_Wait
#define MPI_Waitall rc_smpi_Waitall
#define MPI_Waitany rc_smpi_Waitany
#define MPI_Waitsome rc_smpi_Waitsome
#define MPI_Request_get_status rc_smpi_Request_get_status
#define MPI_Request_free rc_smpi_Request_free
#define MPI_Cancel rc_smpi_Cancel
#define MPI_Add_error_string rc_smpi_Add_error_string
#define MPI_Comm_call_errhandler rc_smpi_Comm_call_errhandler
#define MPI_Type_dup rc_smpi_Type_dup
#define MPI_Type_free rc_smpi_Type_free
#define MPI_Abort rc_smpi_Abort
#define MPI_Comm_create_group rc_smpi_Comm_create_group
#define MPI_Comm_split rc_smpi_Comm_split
#define getenv rc_smpi_getenv
#define setenv rc_smpi_setenv
#define unsetenv rc_smpi_unsetenv
#ifdef __cplusplus
namespace std {
using ::rc_smpi_getenv;  // std::getenv, after the macro
}
#endif
#endif

#endif
