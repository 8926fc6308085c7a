// Point-to-point on range communicators: every send mode, receives, probes and matched probes,
// delegated to core. Ranks and statuses are the range's, tags the program's.
#include <vector>

#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "requests/requests.h"

namespace rcshim {

int fake_range(MPI_Comm comm, const char* fn, FakeComm** c) {
  if (int rc = get_comm(comm, fn, c)) return rc;
  if ((*c)->range.is_null())
    return raise_error(comm, MPI_ERR_COMM,
                       "%s: the MPI_Comm_idup making this communicator has "
                       "not completed",
                       fn);
  return MPI_SUCCESS;
}

int start_request(MPI_Comm comm, MPI_Request* request, const char* fn,
                  const std::function<int(rangecomm::Request*)>& op) {
  if (request == nullptr) return raise_error(comm, MPI_ERR_REQUEST, "%s: request is NULL", fn);
  FakeRequest* r = nullptr;
  if (int rc = new_request(comm, request, &r)) return rc;
  int rc = op(&r->inner);
  if (rc != MPI_SUCCESS) {
    request_table().release(rc_fake_request_index(*request));
    *request = MPI_REQUEST_NULL;
    return raise_on(comm, rc);
  }
  return MPI_SUCCESS;
}

// Buffered mode: the data is copied at once and sent from the copy, so the call (and the
// request of MPI_Ibsend) completes locally whatever the receiver does. The copy lives in a
// detached request until the message is out. (The program's MPI_Buffer_attach space is not
// used; see docs/shim-design.md.)
int buffered_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  const rangecomm::Comm& range) {
  if (dest == MPI_PROC_NULL || dest == range.rank())  // core buffers messages to self
    return result(comm, rangecomm::Send(buf, count, type, dest, tag, range));
  auto copy = std::make_shared<std::vector<char>>();
  int size = 0;
  if (int rc = pack(buf, count, type, comm, copy.get(), &size)) return rc;
  return send_copy(std::move(copy), size, dest, tag, comm, range);
}

int send_copy(std::shared_ptr<std::vector<char>> packed, int size, int dest, int tag, MPI_Comm comm,
              const rangecomm::Comm& range) {
  FakeRequest r;
  int rc = rangecomm::Isend(packed->data(), size, MPI_PACKED, dest, tag, range, &r.inner);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  r.keep = std::move(packed);
  detach(std::move(r));
  return MPI_SUCCESS;
}

int pack(const void* buf, int count, MPI_Datatype type, MPI_Comm comm, std::vector<char>* packed,
         int* size) {
  int bytes = 0;
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, "count %d is negative", count);
  if (int rc = MPI_Pack_size(count, type, MPI_COMM_WORLD, &bytes)) return raise_on(comm, rc);
  packed->resize(static_cast<size_t>(bytes) + 1);
  *size = 0;
  if (buf == MPI_BOTTOM && count > 0) {
    // Absolute-address types: MPICH refuses MPI_Pack from a null buffer, so the data goes
    // through MPI's self-communication into MPI_PACKED, which gives the same bytes (as core's
    // pack_typed does).
    MPI_Status st;
    int rc = MPI_Sendrecv(buf, count, type, 0, 0, packed->data(), bytes, MPI_PACKED, 0, 0,
                          MPI_COMM_SELF, &st);
    if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, MPI_PACKED, size);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : raise_on(comm, rc);
  }
  if (int rc = MPI_Pack(buf, count, type, packed->data(), bytes, size, MPI_COMM_WORLD))
    return raise_on(comm, rc);
  return MPI_SUCCESS;
}

MPI_Datatype held_type(MPI_Datatype type, std::shared_ptr<void>* keep) {
  int ints = 0, addrs = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  if (type == MPI_DATATYPE_NULL ||
      MPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) != MPI_SUCCESS ||
      combiner == MPI_COMBINER_NAMED)
    return type;  // predefined (or invalid, which the operation will report)
  auto* dup = new MPI_Datatype(MPI_DATATYPE_NULL);
  MPI_Type_dup(type, dup);
  *keep = std::shared_ptr<void>(dup, [](void* p) {
    auto* t = static_cast<MPI_Datatype*>(p);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(t);
    delete t;
  });
  return *dup;
}

}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Send");
  return result(comm, rangecomm::Send(buf, count, datatype, dest, tag, range));
}

// Ready mode is a promise that the receive is posted; a standard send keeps every such program
// correct.
extern "C" int rc_fake_MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Rsend");
  return result(comm, rangecomm::Send(buf, count, datatype, dest, tag, range));
}

extern "C" int rc_fake_MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Ssend");
  return result(comm, rangecomm::Ssend(buf, count, datatype, dest, tag, range));
}

extern "C" int rc_fake_MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Bsend");
  return buffered_send(buf, count, datatype, dest, tag, comm, range);
}

extern "C" int rc_fake_MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                 int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Isend");
  return start_request(comm, request, "MPI_Isend", [&](rangecomm::Request* r) {
    return rangecomm::Isend(buf, count, datatype, dest, tag, range, r);
  });
}

extern "C" int rc_fake_MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Irsend");
  return start_request(comm, request, "MPI_Irsend", [&](rangecomm::Request* r) {
    return rangecomm::Isend(buf, count, datatype, dest, tag, range, r);
  });
}

extern "C" int rc_fake_MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Issend");
  return start_request(comm, request, "MPI_Issend", [&](rangecomm::Request* r) {
    return rangecomm::Issend(buf, count, datatype, dest, tag, range, r);
  });
}

extern "C" int rc_fake_MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                                  int tag, MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Ibsend");
  if (request == nullptr) return raise_error(comm, MPI_ERR_REQUEST, "MPI_Ibsend: request is NULL");
  if (int rc = buffered_send(buf, count, datatype, dest, tag, comm, range)) return rc;
  return new_done_request(comm, request);
}

extern "C" int rc_fake_MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                MPI_Comm comm, MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Recv");
  return result(comm, rangecomm::Recv(buf, count, datatype, source, tag, range, status));
}

extern "C" int rc_fake_MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                                 MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Irecv");
  return start_request(comm, request, "MPI_Irecv", [&](rangecomm::Request* r) {
    return rangecomm::Irecv(buf, count, datatype, source, tag, range, r);
  });
}

extern "C" int rc_fake_MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    int dest, int sendtag, void* recvbuf, int recvcount,
                                    MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                                    MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Sendrecv");
  return result(comm, rangecomm::Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                          recvcount, recvtype, source, recvtag, range, status));
}

// The outgoing data is copied (packed) first, so the receive may overwrite buf at once.
extern "C" int rc_fake_MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                            int sendtag, int source, int recvtag, MPI_Comm comm,
                                            MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Sendrecv_replace");
  std::vector<char> packed;
  int position = 0;
  if (int rc = pack(buf, count, datatype, comm, &packed, &position)) return rc;
  return result(comm, rangecomm::Sendrecv(packed.data(), position, MPI_PACKED, dest, sendtag, buf,
                                          count, datatype, source, recvtag, range, status));
}

extern "C" int rc_fake_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Probe");
  return result(comm, rangecomm::Probe(source, tag, range, status));
}

extern "C" int rc_fake_MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                                  MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Iprobe");
  return result(comm, rangecomm::Iprobe(source, tag, range, flag, status));
}

namespace {

// A probed message becomes a fake MPI_Message; MPI_PROC_NULL gives MPI's own NO_PROC handle.
int hand_out_message(MPI_Comm comm, int source, rangecomm::Message m, MPI_Message* message) {
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    return MPI_SUCCESS;
  }
  return new_message(comm, std::move(m), message);
}

}  // namespace

extern "C" int rc_fake_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                                  MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Mprobe");
  rangecomm::Message m;
  if (int rc = rangecomm::Mprobe(source, tag, range, &m, status)) return raise_on(comm, rc);
  return hand_out_message(comm, source, std::move(m), message);
}

extern "C" int rc_fake_MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                                   MPI_Message* message, MPI_Status* status) {
  RC_FAKE_RANGE("MPI_Improbe");
  rangecomm::Message m;
  if (int rc = rangecomm::Improbe(source, tag, range, flag, &m, status)) return raise_on(comm, rc);
  if (!*flag) return MPI_SUCCESS;
  return hand_out_message(comm, source, std::move(m), message);
}

extern "C" int rc_fake_MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                                 MPI_Status* status) {
  FakeMessage* m = find_message(*message);
  if (m == nullptr)
    return raise_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                       "MPI_Mrecv: message %#llx was already received (or never existed)",
                       handle_value(*message));
  MPI_Comm comm = m->comm;
  int rc = rangecomm::Mrecv(buf, count, datatype, &m->inner, status);
  message_table().release(rc_fake_message_index(*message));
  *message = MPI_MESSAGE_NULL;
  return result(comm, rc);
}

extern "C" int rc_fake_MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                                  MPI_Request* request) {
  FakeMessage* m = find_message(*message);
  if (m == nullptr)
    return raise_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                       "MPI_Imrecv: message %#llx was already received (or never existed)",
                       handle_value(*message));
  MPI_Comm comm = m->comm;
  int rc = start_request(comm, request, "MPI_Imrecv", [&](rangecomm::Request* r) {
    return rangecomm::Imrecv(buf, count, datatype, &m->inner, r);
  });
  if (rc == MPI_SUCCESS) {
    message_table().release(rc_fake_message_index(*message));
    *message = MPI_MESSAGE_NULL;
  }
  return rc;
}
