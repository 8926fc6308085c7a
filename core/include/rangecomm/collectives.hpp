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
int Ibcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm, Request* request);

int Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm);
int Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
            const Comm& comm, Request* request);

int Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm);
int Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               const Comm& comm, Request* request);

// Gather family (core/src/coll/gather.cpp, scatter.cpp, allgather.cpp). Receive-side arguments
// matter only where MPI says they do (the root for Gather/Scatter); only the root allocates
// nothing beyond its result, other ranks hold only what they forward.
int Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, const Comm& comm);
int Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const Comm& comm, Request* request);
int Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
            const Comm& comm);
int Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             const Comm& comm, Request* request);
int Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const Comm& comm);
int Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, const Comm& comm, Request* request);
int Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, const Comm& comm);
int Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              const Comm& comm, Request* request);
int Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, const Comm& comm);
int Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request);
int Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, const Comm& comm);
int Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, const Comm& comm,
                Request* request);

// All-to-all family (core/src/coll/alltoall.cpp).
int Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, const Comm& comm);
int Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request);
int Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, const Comm& comm);
int Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype, const Comm& comm, Request* request);
int Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const int rdispls[], const MPI_Datatype recvtypes[], const Comm& comm);
int Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
               const int rdispls[], const MPI_Datatype recvtypes[], const Comm& comm,
               Request* request);

// Scans and reduce-scatters (core/src/coll/scan.cpp, reduce_scatter.cpp).
int Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
         const Comm& comm);
int Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
          const Comm& comm, Request* request);
int Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
           const Comm& comm);
int Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            const Comm& comm, Request* request);
int Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                   MPI_Op op, const Comm& comm);
int Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                    MPI_Op op, const Comm& comm, Request* request);
int Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                         MPI_Op op, const Comm& comm);
int Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                          MPI_Op op, const Comm& comm, Request* request);

}  // namespace rangecomm
