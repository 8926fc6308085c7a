// MPI's progress rule across the two kinds of communicator: while a process blocks in a call on
// real handles, its outstanding range operations must keep moving, or a program that is
// correct with real communicators could deadlock. The generated wrappers come here only while
// rangecomm::Progress_needed(); each blocking call becomes its nonblocking form and a wait that
// advances core (wait_real). Calls with no nonblocking form (MPI_Comm_split, window and file
// calls, ...) stay blocking; see docs/shim-design.md.
#include "objects.h"

using namespace rcshim;

namespace {

template <class Start>
int as_nonblocking(MPI_Status* status, Start start) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = start(&request);
  return rc == MPI_SUCCESS ? wait_real(&request, status) : rc;
}

}  // namespace

extern "C" int rc_blocking_MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
                                    int tag, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Isend(buf, count, datatype, dest, tag, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                     int tag, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Issend(buf, count, datatype, dest, tag, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                     int tag, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Irsend(buf, count, datatype, dest, tag, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source,
                                    int tag, MPI_Comm comm, MPI_Status* status) {
  return as_nonblocking(status, [&](MPI_Request* r) {
    return MPI_Irecv(buf, count, datatype, source, tag, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        int dest, int sendtag, void* recvbuf, int recvcount,
                                        MPI_Datatype recvtype, int source, int recvtag,
                                        MPI_Comm comm, MPI_Status* status) {
  MPI_Request send = MPI_REQUEST_NULL;
  int rc = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &send);
  if (rc != MPI_SUCCESS) return rc;
  rc = as_nonblocking(status, [&](MPI_Request* r) {
    return MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, r);
  });
  int send_rc = wait_real(&send, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS ? rc : send_rc;
}

extern "C" int rc_blocking_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Backoff backoff;
  while (rangecomm::Progress_needed()) {
    int flag = 0;
    int rc = MPI_Iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    rangecomm::Progress();
    backoff.pause();
  }
  return MPI_Probe(source, tag, comm, status);
}

extern "C" int rc_blocking_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                                      MPI_Status* status) {
  Backoff backoff;
  while (rangecomm::Progress_needed()) {
    int flag = 0;
    int rc = MPI_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    rangecomm::Progress();
    backoff.pause();
  }
  return MPI_Mprobe(source, tag, comm, message, status);
}

extern "C" int rc_blocking_MPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
                                     MPI_Message* message, MPI_Status* status) {
  return as_nonblocking(
      status, [&](MPI_Request* r) { return MPI_Imrecv(buf, count, datatype, message, r); });
}

// Polling calls: each poll also advances range operations.
extern "C" int rc_blocking_MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                                      MPI_Status* status) {
  rangecomm::Progress();
  return MPI_Iprobe(source, tag, comm, flag, status);
}

extern "C" int rc_blocking_MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                                       MPI_Message* message, MPI_Status* status) {
  rangecomm::Progress();
  return MPI_Improbe(source, tag, comm, flag, message, status);
}

extern "C" int rc_blocking_MPI_Barrier(MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) { return MPI_Ibarrier(comm, r); });
}

extern "C" int rc_blocking_MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                     MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ibcast(buffer, count, datatype, root, comm, r);
  });
}

// Blocking collectives on real communicators: their nonblocking forms, waited with progress.

extern "C" int rc_blocking_MPI_Reduce(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                      MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm, r);
  });
}

extern "C" int rc_blocking_MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       int root, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Scatterv(const void* sendbuf, const int sendcounts[],
                                        const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, int root,
                                        MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, r);
  });
}

extern "C" int rc_blocking_MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void* recvbuf, const int recvcounts[], const int displs[],
                                          MPI_Datatype recvtype, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm, r);
  });
}

extern "C" int rc_blocking_MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int rdispls[],
                                         MPI_Datatype recvtype, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                                         const int sdispls[], const MPI_Datatype sendtypes[],
                                         void* recvbuf, const int recvcounts[], const int rdispls[],
                                         const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Scan(const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Exscan(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                                              const int recvcounts[], MPI_Datatype datatype,
                                              MPI_Op op, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf,
                                                    int recvcount, MPI_Datatype datatype, MPI_Op op,
                                                    MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void* recvbuf,
                                                  int recvcount, MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   r);
  });
}

extern "C" int rc_blocking_MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                                                   MPI_Datatype sendtype, void* recvbuf,
                                                   const int recvcounts[], const int displs[],
                                                   MPI_Datatype recvtype, MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                                                 MPI_Datatype sendtype, void* recvbuf,
                                                 int recvcount, MPI_Datatype recvtype,
                                                 MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                  r);
  });
}

extern "C" int rc_blocking_MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                                  const int sdispls[], MPI_Datatype sendtype,
                                                  void* recvbuf, const int recvcounts[],
                                                  const int rdispls[], MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, r);
  });
}

extern "C" int rc_blocking_MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                                  const MPI_Aint sdispls[],
                                                  const MPI_Datatype sendtypes[], void* recvbuf,
                                                  const int recvcounts[], const MPI_Aint rdispls[],
                                                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return as_nonblocking(MPI_STATUS_IGNORE, [&](MPI_Request* r) {
    return MPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm, r);
  });
}
