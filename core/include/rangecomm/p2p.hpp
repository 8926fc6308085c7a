// Point-to-point communication and request completion on range communicators.
//
// Signatures follow MPI: ranks and statuses are those of the range, tags are the user's tags
// (0..max_user_tag(), at least 32767), every call returns MPI_SUCCESS or an MPI error code whose
// class (MPI_Error_class) says what went wrong and whose string (rangecomm::Error_string; also
// MPI_Error_string on Open MPI) says why. Each error class keeps its latest message.
// Errors are also raised through the error handler of the root MPI communicator.
#pragma once

#include <mpi.h>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

// Largest user tag accepted on ranges: MPI_TAG_UB, as on every MPI communicator (>= 32767).
// Tags above 32767 cost one more small message each (docs/tag-layout.md).
int max_user_tag();

int Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm);
int Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm);
int Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm,
          Request* request);
int Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm,
           Request* request);

int Recv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm,
         MPI_Status* status);
int Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm,
          Request* request);

int Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
             const Comm& comm, MPI_Status* status);

int Probe(int source, int tag, const Comm& comm, MPI_Status* status);
int Iprobe(int source, int tag, const Comm& comm, int* flag, MPI_Status* status);

// Matched probes: the message is taken out of matching; receive it with Mrecv or Imrecv.
int Mprobe(int source, int tag, const Comm& comm, Message* message, MPI_Status* status);
int Improbe(int source, int tag, const Comm& comm, int* flag, Message* message, MPI_Status* status);
int Mrecv(void* buf, int count, MPI_Datatype type, Message* message, MPI_Status* status);
int Imrecv(void* buf, int count, MPI_Datatype type, Message* message, Request* request);

}  // namespace rangecomm
