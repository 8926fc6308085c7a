// Persistent point-to-point requests on ranges (MPI_X_init + MPI_Start), and MPI-4's
// MPI_Isendrecv(_replace). A persistent request keeps its arguments (and a duplicate of a
// derived datatype) and starts a fresh core operation at every MPI_Start.
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "requests/requests.h"

namespace rcshim {
namespace {

using Starter = std::function<int(rangecomm::Request*)>;

// A new inactive persistent request; make_start builds its starter from the held datatype.
int persistent(MPI_Comm comm, MPI_Datatype type, MPI_Request* request, const char* fn,
               const std::function<Starter(MPI_Datatype)>& make_start) {
  if (request == nullptr) return raise_error(comm, MPI_ERR_REQUEST, "%s: request is NULL", fn);
  FakeRequest* r = nullptr;
  if (int rc = new_request(comm, request, &r)) return rc;
  MPI_Datatype held = held_type(type, &r->keep);
  r->start = make_start(held);
  r->active = false;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                     int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Send_init");
  return persistent(comm, datatype, request, "MPI_Send_init", [=](MPI_Datatype t) -> Starter {
    return
        [=](rangecomm::Request* r) { return rangecomm::Isend(buf, count, t, dest, tag, range, r); };
  });
}

// Ready mode: a standard send serves every correct program (see MPI_Rsend).
extern "C" int rc_fake_MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Rsend_init");
  return persistent(comm, datatype, request, "MPI_Rsend_init", [=](MPI_Datatype t) -> Starter {
    return
        [=](rangecomm::Request* r) { return rangecomm::Isend(buf, count, t, dest, tag, range, r); };
  });
}

extern "C" int rc_fake_MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ssend_init");
  return persistent(comm, datatype, request, "MPI_Ssend_init", [=](MPI_Datatype t) -> Starter {
    return [=](rangecomm::Request* r) {
      return rangecomm::Issend(buf, count, t, dest, tag, range, r);
    };
  });
}

// Each start copies the data and completes at once, as MPI_Ibsend does.
extern "C" int rc_fake_MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Bsend_init");
  return persistent(comm, datatype, request, "MPI_Bsend_init", [=](MPI_Datatype t) -> Starter {
    return [=](rangecomm::Request* r) {
      int rc = buffered_send(buf, count, t, dest, tag, comm, range);
      if (rc == MPI_SUCCESS)
        rc = rangecomm::Isend(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, range, r);
      return rc;
    };
  });
}

extern "C" int rc_fake_MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source,
                                     int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Recv_init");
  return persistent(comm, datatype, request, "MPI_Recv_init", [=](MPI_Datatype t) -> Starter {
    return [=](rangecomm::Request* r) {
      return rangecomm::Irecv(buf, count, t, source, tag, range, r);
    };
  });
}

// MPI-4. The outgoing data is copied and its send detached; the request is the receive, so it
// completes when the message has arrived, and the send buffer is free at once.
namespace {

int sendrecv_copied(std::shared_ptr<std::vector<char>> packed, int size, int dest, int sendtag,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, const rangecomm::Comm& range, MPI_Request* request,
                    const char* fn) {
  int rc = start_request(comm, request, fn, [&](rangecomm::Request* r) {
    return rangecomm::Irecv(recvbuf, recvcount, recvtype, source, recvtag, range, r);
  });
  if (rc != MPI_SUCCESS) return rc;
  rc = dest == MPI_PROC_NULL || dest == range.rank()
           ? result(comm, rangecomm::Send(packed->data(), size, MPI_PACKED, dest, sendtag, range))
           : send_copy(std::move(packed), size, dest, sendtag, comm, range);
  if (rc != MPI_SUCCESS) {  // the receive must not stay posted: cancel it, let it finish unseen
    FakeRequest* r = find_request(*request);
    rangecomm::Cancel(&r->inner);
    detach(std::move(*r));
    request_table().release(rc_fake_request_index(*request));
    *request = MPI_REQUEST_NULL;
  }
  return rc;
}

}  // namespace

extern "C" int rc_fake_MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     int dest, int sendtag, void* recvbuf, int recvcount,
                                     MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                                     MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Isendrecv");
  auto packed = std::make_shared<std::vector<char>>();
  int size = 0;
  if (int rc = pack(sendbuf, sendcount, sendtype, comm, packed.get(), &size)) return rc;
  return sendrecv_copied(std::move(packed), size, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, range, request, "MPI_Isendrecv");
}

extern "C" int rc_fake_MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                             int sendtag, int source, int recvtag, MPI_Comm comm,
                                             MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Isendrecv_replace");
  auto packed = std::make_shared<std::vector<char>>();
  int size = 0;
  if (int rc = pack(buf, count, datatype, comm, packed.get(), &size)) return rc;
  return sendrecv_copied(std::move(packed), size, dest, sendtag, buf, count, datatype, source,
                         recvtag, comm, range, request, "MPI_Isendrecv_replace");
}
