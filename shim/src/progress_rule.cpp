// MPI's progress rule across the two kinds of communicator: while a process blocks in a call on
// real handles, its outstanding range operations must keep moving, or a program that is
// correct with real communicators could deadlock. The generated wrappers come here only while
// rangecomm::Progress_needed(). Blocking point-to-point calls become their nonblocking forms and
// a wait that advances core (wait_real): blocking and nonblocking point-to-point calls match
// each other. Collectives do not (a blocking collective never matches a nonblocking one), so
// they stay as they are and a helper thread advances core meanwhile (progress_helper.cpp).
#include "creation.h"
#include "errors.h"
#include "handles.h"
#include "requests.h"

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

extern "C" int rc_blocking_MPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
                                     MPI_Message* message, MPI_Status* status) {
  return as_nonblocking(
      status, [&](MPI_Request* r) { return MPI_Imrecv(buf, count, datatype, message, r); });
}

// Polling calls: each poll also advances range operations.
extern "C" int rc_blocking_MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                                      MPI_Status* status) {
  progress_locked();
  return MPI_Iprobe(source, tag, comm, flag, status);
}

extern "C" int rc_blocking_MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                                       MPI_Message* message, MPI_Status* status) {
  progress_locked();
  return MPI_Improbe(source, tag, comm, flag, message, status);
}
