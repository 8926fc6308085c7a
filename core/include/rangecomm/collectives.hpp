// Collectives on range communicators, blocking and nonblocking, with MPI's signatures and
// semantics: ranks are the range's, MPI_IN_PLACE is accepted where MPI accepts it, any
// datatype, predefined and user-defined operations (non-commutative ones reduce in rank order).
// Members must call the collectives of one communicator in the same order; any number of
// nonblocking collectives may be outstanding at once (up to 32768 per communicator).
#pragma once

#include <mpi.h>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

int Barrier(const Comm& comm);
int Ibarrier(const Comm& comm, Request* request);

int Bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm);
int Ibcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm,
           Request* request);

int Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
           int root, const Comm& comm);
int Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            int root, const Comm& comm, Request* request);

int Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm);
int Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               const Comm& comm, Request* request);

}  // namespace rangecomm
