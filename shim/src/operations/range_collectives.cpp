// Every MPI-3 collective on range communicators, blocking and nonblocking, delegated to core
// (core/include/rangecomm/collectives.hpp); nonblocking ones hand out fake requests.
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "requests/requests.h"

using namespace rcshim;

extern "C" int rc_fake_MPI_Barrier(MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Barrier");
  return result(comm, rangecomm::Barrier(range));
}

extern "C" int rc_fake_MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ibarrier");
  return start_request(comm, request, "MPI_Ibarrier",
                       [&](rangecomm::Request* r) { return rangecomm::Ibarrier(range, r); });
}

extern "C" int rc_fake_MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Bcast");
  return result(comm, rangecomm::Bcast(buffer, count, datatype, root, range));
}

extern "C" int rc_fake_MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ibcast");
  return start_request(comm, request, "MPI_Ibcast", [&](rangecomm::Request* r) {
    return rangecomm::Ibcast(buffer, count, datatype, root, range, r);
  });
}

extern "C" int rc_fake_MPI_Reduce(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Reduce");
  return result(comm, rangecomm::Reduce(sendbuf, recvbuf, count, datatype, op, root, range));
}

extern "C" int rc_fake_MPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                   MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ireduce");
  return start_request(comm, request, "MPI_Ireduce", [&](rangecomm::Request* r) {
    return rangecomm::Ireduce(sendbuf, recvbuf, count, datatype, op, root, range, r);
  });
}

extern "C" int rc_fake_MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Allreduce");
  return result(comm, rangecomm::Allreduce(sendbuf, recvbuf, count, datatype, op, range));
}

extern "C" int rc_fake_MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iallreduce");
  return start_request(comm, request, "MPI_Iallreduce", [&](rangecomm::Request* r) {
    return rangecomm::Iallreduce(sendbuf, recvbuf, count, datatype, op, range, r);
  });
}

extern "C" int rc_fake_MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Gather");
  return result(comm, rangecomm::Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                        root, range));
}

extern "C" int rc_fake_MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Igather");
  return start_request(comm, request, "MPI_Igather", [&](rangecomm::Request* r) {
    return rangecomm::Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              range, r);
  });
}

extern "C" int rc_fake_MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Gatherv");
  return result(comm, rangecomm::Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                         recvtype, root, range));
}

extern "C" int rc_fake_MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                                    MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Igatherv");
  return start_request(comm, request, "MPI_Igatherv", [&](rangecomm::Request* r) {
    return rangecomm::Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, range, r);
  });
}

extern "C" int rc_fake_MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Scatter");
  return result(comm, rangecomm::Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         root, range));
}

extern "C" int rc_fake_MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iscatter");
  return start_request(comm, request, "MPI_Iscatter", [&](rangecomm::Request* r) {
    return rangecomm::Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               range, r);
  });
}

extern "C" int rc_fake_MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                                    MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                    MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Scatterv");
  return result(comm, rangecomm::Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                          recvtype, root, range));
}

extern "C" int rc_fake_MPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                                     const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                     MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iscatterv");
  return start_request(comm, request, "MPI_Iscatterv", [&](rangecomm::Request* r) {
    return rangecomm::Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                root, range, r);
  });
}

extern "C" int rc_fake_MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Allgather");
  return result(comm, rangecomm::Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, range));
}

extern "C" int rc_fake_MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iallgather");
  return start_request(comm, request, "MPI_Iallgather", [&](rangecomm::Request* r) {
    return rangecomm::Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, range,
                                 r);
  });
}

extern "C" int rc_fake_MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, const int recvcounts[], const int displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Allgatherv");
  return result(comm, rangecomm::Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                            displs, recvtype, range));
}

extern "C" int rc_fake_MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iallgatherv");
  return start_request(comm, request, "MPI_Iallgatherv", [&](rangecomm::Request* r) {
    return rangecomm::Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, range, r);
  });
}

extern "C" int rc_fake_MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Alltoall");
  return result(
      comm, rangecomm::Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, range));
}

extern "C" int rc_fake_MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ialltoall");
  return start_request(comm, request, "MPI_Ialltoall", [&](rangecomm::Request* r) {
    return rangecomm::Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, range,
                                r);
  });
}

extern "C" int rc_fake_MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                     const int recvcounts[], const int rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Alltoallv");
  return result(comm, rangecomm::Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype, range));
}

extern "C" int rc_fake_MPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                      const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ialltoallv");
  return start_request(comm, request, "MPI_Ialltoallv", [&](rangecomm::Request* r) {
    return rangecomm::Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, range, r);
  });
}

extern "C" int rc_fake_MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                                     const int sdispls[], const MPI_Datatype sendtypes[],
                                     void* recvbuf, const int recvcounts[], const int rdispls[],
                                     const MPI_Datatype recvtypes[], MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Alltoallw");
  return result(comm, rangecomm::Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, range));
}

extern "C" int rc_fake_MPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                                      const int sdispls[], const MPI_Datatype sendtypes[],
                                      void* recvbuf, const int recvcounts[], const int rdispls[],
                                      const MPI_Datatype recvtypes[], MPI_Comm comm,
                                      MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ialltoallw");
  return start_request(comm, request, "MPI_Ialltoallw", [&](rangecomm::Request* r) {
    return rangecomm::Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, range, r);
  });
}

extern "C" int rc_fake_MPI_Scan(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Scan");
  return result(comm, rangecomm::Scan(sendbuf, recvbuf, count, datatype, op, range));
}

extern "C" int rc_fake_MPI_Iscan(const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iscan");
  return start_request(comm, request, "MPI_Iscan", [&](rangecomm::Request* r) {
    return rangecomm::Iscan(sendbuf, recvbuf, count, datatype, op, range, r);
  });
}

extern "C" int rc_fake_MPI_Exscan(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Exscan");
  return result(comm, rangecomm::Exscan(sendbuf, recvbuf, count, datatype, op, range));
}

extern "C" int rc_fake_MPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Iexscan");
  return start_request(comm, request, "MPI_Iexscan", [&](rangecomm::Request* r) {
    return rangecomm::Iexscan(sendbuf, recvbuf, count, datatype, op, range, r);
  });
}

extern "C" int rc_fake_MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                                          const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                          MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Reduce_scatter");
  return result(comm, rangecomm::Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, range));
}

extern "C" int rc_fake_MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                                           const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                           MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ireduce_scatter");
  return start_request(comm, request, "MPI_Ireduce_scatter", [&](rangecomm::Request* r) {
    return rangecomm::Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, range, r);
  });
}

extern "C" int rc_fake_MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Reduce_scatter_block");
  return result(comm,
                rangecomm::Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, range));
}

extern "C" int rc_fake_MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ireduce_scatter_block");
  return start_request(comm, request, "MPI_Ireduce_scatter_block", [&](rangecomm::Request* r) {
    return rangecomm::Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, range, r);
  });
}
