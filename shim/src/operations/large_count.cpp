// MPI-4's large-count (_c) point-to-point calls on ranges (MPICH 4): counts that fit an int go
// to the int calls, larger ones are an MPI_ERR_COUNT error (core counts in int). Without these,
// the generated default would make a real communicator, a collective step no point-to-point
// call may take. (Partitioned communication, also MPI-4: partitioned.cpp.)
#include <climits>

#include "handles/errors.h"
#include "handles/handles.h"
#include "requests/requests.h"

#if MPI_VERSION >= 4

using namespace rcshim;

namespace {

// MPI_SUCCESS when count fits the int calls, else the error (raised on comm).
int count_error(MPI_Count count, MPI_Comm comm, const char* fn) {
  if (count <= INT_MAX) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_COUNT, "%s: count %lld is above what ranges take (%d)", fn,
                     static_cast<long long>(count), INT_MAX);
}

// The communicator a message belongs to, for errors.
MPI_Comm comm_of(MPI_Message* message) {
  FakeMessage* m = find_message(*message);
  return m ? m->comm : MPI_COMM_WORLD;
}

}  // namespace

extern "C" int rc_fake_MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm) {
  if (int rc = count_error(count, comm, "MPI_Bsend_c")) return rc;
  return rc_fake_MPI_Bsend(buf, static_cast<int>(count), datatype, dest, tag, comm);
}

extern "C" int rc_fake_MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                        int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Bsend_init_c")) return rc;
  return rc_fake_MPI_Bsend_init(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Ibsend_c")) return rc;
  return rc_fake_MPI_Ibsend(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                   int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Irecv_c")) return rc;
  return rc_fake_MPI_Irecv(buf, static_cast<int>(count), datatype, source, tag, comm, request);
}

extern "C" int rc_fake_MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Irsend_c")) return rc;
  return rc_fake_MPI_Irsend(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Isend_c")) return rc;
  return rc_fake_MPI_Isend(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                    int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Issend_c")) return rc;
  return rc_fake_MPI_Issend(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                  int tag, MPI_Comm comm, MPI_Status* status) {
  if (int rc = count_error(count, comm, "MPI_Recv_c")) return rc;
  return rc_fake_MPI_Recv(buf, static_cast<int>(count), datatype, source, tag, comm, status);
}

extern "C" int rc_fake_MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                                       int source, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Recv_init_c")) return rc;
  return rc_fake_MPI_Recv_init(buf, static_cast<int>(count), datatype, source, tag, comm, request);
}

extern "C" int rc_fake_MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm) {
  if (int rc = count_error(count, comm, "MPI_Rsend_c")) return rc;
  return rc_fake_MPI_Rsend(buf, static_cast<int>(count), datatype, dest, tag, comm);
}

extern "C" int rc_fake_MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                        int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Rsend_init_c")) return rc;
  return rc_fake_MPI_Rsend_init(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm) {
  if (int rc = count_error(count, comm, "MPI_Send_c")) return rc;
  return rc_fake_MPI_Send(buf, static_cast<int>(count), datatype, dest, tag, comm);
}

extern "C" int rc_fake_MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                       int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Send_init_c")) return rc;
  return rc_fake_MPI_Send_init(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                   int dest, int tag, MPI_Comm comm) {
  if (int rc = count_error(count, comm, "MPI_Ssend_c")) return rc;
  return rc_fake_MPI_Ssend(buf, static_cast<int>(count), datatype, dest, tag, comm);
}

extern "C" int rc_fake_MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                                        int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Ssend_init_c")) return rc;
  return rc_fake_MPI_Ssend_init(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

extern "C" int rc_fake_MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                                              int dest, int sendtag, int source, int recvtag,
                                              MPI_Comm comm, MPI_Status* status) {
  if (int rc = count_error(count, comm, "MPI_Sendrecv_replace_c")) return rc;
  return rc_fake_MPI_Sendrecv_replace(buf, static_cast<int>(count), datatype, dest, sendtag, source,
                                      recvtag, comm, status);
}

extern "C" int rc_fake_MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                                               int dest, int sendtag, int source, int recvtag,
                                               MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(count, comm, "MPI_Isendrecv_replace_c")) return rc;
  return rc_fake_MPI_Isendrecv_replace(buf, static_cast<int>(count), datatype, dest, sendtag,
                                       source, recvtag, comm, request);
}

extern "C" int rc_fake_MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Message* message, MPI_Status* status) {
  if (int rc = count_error(count, comm_of(message), "MPI_Mrecv_c")) return rc;
  return rc_fake_MPI_Mrecv(buf, static_cast<int>(count), datatype, message, status);
}

extern "C" int rc_fake_MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                                    MPI_Message* message, MPI_Request* request) {
  if (int rc = count_error(count, comm_of(message), "MPI_Imrecv_c")) return rc;
  return rc_fake_MPI_Imrecv(buf, static_cast<int>(count), datatype, message, request);
}

extern "C" int rc_fake_MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                                      MPI_Count recvcount, MPI_Datatype recvtype, int source,
                                      int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (int rc = count_error(sendcount, comm, "MPI_Sendrecv_c")) return rc;
  if (int rc = count_error(recvcount, comm, "MPI_Sendrecv_c")) return rc;
  return rc_fake_MPI_Sendrecv(sendbuf, static_cast<int>(sendcount), sendtype, dest, sendtag,
                              recvbuf, static_cast<int>(recvcount), recvtype, source, recvtag, comm,
                              status);
}

extern "C" int rc_fake_MPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                                       MPI_Count recvcount, MPI_Datatype recvtype, int source,
                                       int recvtag, MPI_Comm comm, MPI_Request* request) {
  if (int rc = count_error(sendcount, comm, "MPI_Isendrecv_c")) return rc;
  if (int rc = count_error(recvcount, comm, "MPI_Isendrecv_c")) return rc;
  return rc_fake_MPI_Isendrecv(sendbuf, static_cast<int>(sendcount), sendtype, dest, sendtag,
                               recvbuf, static_cast<int>(recvcount), recvtype, source, recvtag,
                               comm, request);
}

// Packing needs no range: the answer is the same on every communicator of these processes.
extern "C" int rc_fake_MPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                                  void* outbuf, MPI_Count outsize, MPI_Count* position,
                                  MPI_Comm comm) {
  return result(comm,
                MPI_Pack_c(inbuf, incount, datatype, outbuf, outsize, position, MPI_COMM_WORLD));
}

extern "C" int rc_fake_MPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position,
                                    void* outbuf, MPI_Count outcount, MPI_Datatype datatype,
                                    MPI_Comm comm) {
  return result(comm,
                MPI_Unpack_c(inbuf, insize, position, outbuf, outcount, datatype, MPI_COMM_WORLD));
}

extern "C" int rc_fake_MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                                       MPI_Count* size) {
  return result(comm, MPI_Pack_size_c(incount, datatype, MPI_COMM_WORLD, size));
}

#endif  // MPI_VERSION >= 4
