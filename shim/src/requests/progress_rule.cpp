// The progress rule's calls that need more than the generator's templates (progress_rule.h):
// MPI_Sendrecv (and its large-count form) as a nonblocking send and receive (MPI_Isendrecv is
// MPI-4, and tools/mpi_api.py says why MPICH 4.0's is not used), and the blocking probes, which
// have no nonblocking twin to wait for: they poll the probe itself while core advances.
#include "requests/progress_rule.h"
#include "requests/requests.h"

using namespace rcshim;

namespace {

// A send and a receive started together, then both waited for while core advances.
template <class Send, class Recv>
int send_and_receive(MPI_Status* status, Send send, Recv recv) {
  MPI_Request sent = MPI_REQUEST_NULL;
  int rc = send(&sent);
  if (rc != MPI_SUCCESS) return rc;
  rc = as_nonblocking(status, recv);
  int send_rc = wait_real(&sent, MPI_STATUS_IGNORE);
  return rc != MPI_SUCCESS ? rc : send_rc;
}

}  // namespace

extern "C" int rc_blocking_MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        int dest, int sendtag, void* recvbuf, int recvcount,
                                        MPI_Datatype recvtype, int source, int recvtag,
                                        MPI_Comm comm, MPI_Status* status) {
  return send_and_receive(
      status,
      [&](MPI_Request* r) {
        return MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, r);
      },
      [&](MPI_Request* r) {
        return MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, r);
      });
}

#if RC_HAVE_MPI_Sendrecv_c
extern "C" int rc_blocking_MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount,
                                          MPI_Datatype sendtype, int dest, int sendtag,
                                          void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                          int source, int recvtag, MPI_Comm comm,
                                          MPI_Status* status) {
  return send_and_receive(
      status,
      [&](MPI_Request* r) {
        return MPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, r);
      },
      [&](MPI_Request* r) {
        return MPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, comm, r);
      });
}
#endif

extern "C" int rc_blocking_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Backoff backoff;
  while (rangecomm::Progress_needed() && !progress_rule_disabled()) {
    int flag = 0;
    int rc = MPI_Iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    progress_locked();
    backoff.pause();
  }
  return MPI_Probe(source, tag, comm, status);
}

extern "C" int rc_blocking_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                                      MPI_Status* status) {
  Backoff backoff;
  while (rangecomm::Progress_needed() && !progress_rule_disabled()) {
    int flag = 0;
    int rc = MPI_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    progress_locked();
    backoff.pause();
  }
  return MPI_Mprobe(source, tag, comm, message, status);
}
