// The progress rule's calls that need more than the generator's templates (progress_rule.h):
// MPI_Sendrecv as a nonblocking send and receive (MPI_Isendrecv is MPI-4; the generator uses it
// for the large-count form), and the blocking probes, which have no nonblocking twin to wait
// for: they poll the probe itself while core advances.
#include "requests/progress_rule.h"
#include "requests/requests.h"

using namespace rcshim;

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
