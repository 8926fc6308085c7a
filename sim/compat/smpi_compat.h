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
// - Not a defect but the simulator's wall time: a process waiting for a message polls, and the
//   simulator runs every poll of every process (p times the simulated time over the poll
//   cost). Here a wait loop that found nothing to do blocks instead (RANGECOMM_IDLE_WAIT, which
//   core's Backoff and the sort's drive loop call when this header defines it) until something
//   it waits for can have happened: a request of its own completes, or another process posts a
//   message to it (a send to a blocked process also sends it a message of no bytes, a "bell",
//   on a communicator of the bells). See "Waiting" in smpi_compat.cpp for what it covers and
//   when it polls on; RANGECOMM_SIM_WAIT=poll turns it off.
// - Not a defect but a cost model: SMPI charges a test's simulated time (smpi/test) once per
//   request it tests, and its nonblocking collectives are one point-to-point request per peer
//   (linear algorithms), so a single MPI_Test of an MPI_Iallreduce over p processes costs 2(p-1)
//   polls; a real MPI's test costs one progress poll. With RANGECOMM_SIM_TEST_COST set (seconds;
//   the scaling runs set it and smpi/test to 0), every MPI_Test, MPI_Testall, MPI_Testany and
//   MPI_Testsome costs that once, whatever it tests.
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
int rc_smpi_Init(int* argc, char*** argv);
int rc_smpi_Init_thread(int* argc, char*** argv, int required, int* provided);
int rc_smpi_Finalize(void);
int rc_smpi_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int rc_smpi_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int rc_smpi_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request);
int rc_smpi_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request);
int rc_smpi_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request);
int rc_smpi_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status);
int rc_smpi_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Status* status);
int rc_smpi_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int rc_smpi_Wait(MPI_Request* request, MPI_Status* status);
int rc_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int rc_smpi_Request_free(MPI_Request* request);
int rc_smpi_Request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int rc_smpi_Cancel(MPI_Request* request);
void rc_smpi_idle(void);
int rc_smpi_Test(MPI_Request* request, int* flag, MPI_Status* status);
int rc_smpi_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int rc_smpi_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int rc_smpi_Testsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]);
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
#define MPI_Init rc_smpi_Init
#define MPI_Init_thread rc_smpi_Init_thread
#define MPI_Finalize rc_smpi_Finalize
#define MPI_Send rc_smpi_Send
#define MPI_Ssend rc_smpi_Ssend
#define MPI_Isend rc_smpi_Isend
#define MPI_Issend rc_smpi_Issend
#define MPI_Irecv rc_smpi_Irecv
#define MPI_Sendrecv rc_smpi_Sendrecv
#define MPI_Recv rc_smpi_Recv
#define MPI_Iprobe rc_smpi_Iprobe
#define MPI_Wait rc_smpi_Wait
#define MPI_Waitall rc_smpi_Waitall
#define MPI_Request_free rc_smpi_Request_free
#define MPI_Request_get_status rc_smpi_Request_get_status
#define MPI_Cancel rc_smpi_Cancel
#define RANGECOMM_IDLE_WAIT() rc_smpi_idle()
// Sends and waits the blocking wait above would not see: unused by the simulated build, and a
// link error (an undefined rc_smpi_unwrapped_*) should a source start using one, rather than a
// process that blocks for ever.
#define MPI_Rsend rc_smpi_unwrapped_Rsend
#define MPI_Bsend rc_smpi_unwrapped_Bsend
#define MPI_Irsend rc_smpi_unwrapped_Irsend
#define MPI_Ibsend rc_smpi_unwrapped_Ibsend
#define MPI_Sendrecv_replace rc_smpi_unwrapped_Sendrecv_replace
#define MPI_Send_init rc_smpi_unwrapped_Send_init
#define MPI_Ssend_init rc_smpi_unwrapped_Ssend_init
#define MPI_Rsend_init rc_smpi_unwrapped_Rsend_init
#define MPI_Bsend_init rc_smpi_unwrapped_Bsend_init
#define MPI_Recv_init rc_smpi_unwrapped_Recv_init
#define MPI_Start rc_smpi_unwrapped_Start
#define MPI_Startall rc_smpi_unwrapped_Startall
#define MPI_Waitany rc_smpi_unwrapped_Waitany
#define MPI_Waitsome rc_smpi_unwrapped_Waitsome
#define MPI_Test rc_smpi_Test
#define MPI_Testall rc_smpi_Testall
#define MPI_Testany rc_smpi_Testany
#define MPI_Testsome rc_smpi_Testsome
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
