// Point-to-point on ranges. Sends go straight to MPI under the sender's slot (after its binding,
// the first time); specific (source, tag) receives go straight to MPI once the source's binding
// is known. Everything MPI cannot match alone (wildcards, self-messages, receives queued behind
// those, sources whose binding has not arrived) goes through the matching engine.
#include "rangecomm/p2p.hpp"

#include "engine/progress.hpp"
#include "engine/request_access.hpp"
#include "p2p/matching.hpp"
#include "util/errors.hpp"
#include "util/status.hpp"

namespace rangecomm {

using detail::CommAccess;
using detail::RangeState;
using detail::RequestAccess;
using detail::TagLayout;

int max_user_tag() {
  // MPI_TAG_UB is one bound for the whole program, an attribute of MPI_COMM_WORLD (MPI 4.0,
  // "Environmental Inquiries").
  void* attr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag);
  return flag ? *static_cast<int*>(attr) : TagLayout::max_payload;
}

namespace {

enum class Peer { send, recv, probe };

// Checks what every point-to-point call shares; *out is the range on success.
int check(const Comm& comm, int count, MPI_Datatype type, int rank, int tag, Peer peer,
          const char* fn, RangeState** out) {
  RangeState* s = detail::CommAccess::of(comm);
  if (s == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: null communicator", fn);
  MPI_Comm errcomm = s->errcomm();
  if (s->channel->closed())
    return detail::raise(errcomm, MPI_ERR_COMM, "%s: the range's MPI communicator was freed", fn);
  if (count < 0)
    return detail::raise(errcomm, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
  if (peer != Peer::probe && type == MPI_DATATYPE_NULL)
    return detail::raise(errcomm, MPI_ERR_TYPE, "%s: MPI_DATATYPE_NULL", fn);
  bool wildcard_ok = peer != Peer::send;
  if (rank != MPI_PROC_NULL && !(wildcard_ok && rank == MPI_ANY_SOURCE) &&
      (rank < 0 || rank >= s->size))
    return detail::raise(errcomm, MPI_ERR_RANK, "%s: rank %d is not in the range (size %d)", fn,
                         rank, s->size);
  if (!(wildcard_ok && tag == MPI_ANY_TAG) && (tag < 0 || tag > s->channel->user_tag_ub()))
    return detail::raise(errcomm, MPI_ERR_TAG, "%s: tag %d is outside 0..%d (MPI_TAG_UB)", fn, tag,
                         s->channel->user_tag_ub());
  *out = s;
  return MPI_SUCCESS;
}

enum class Mode { standard, synchronous };

// Blocking when request is null.
int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm,
         Mode mode, Request* request, const char* fn) {
  RangeState* s = nullptr;
  int rc = check(comm, count, type, dest, tag, Peer::send, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (dest == MPI_PROC_NULL) {
    if (request) RequestAccess::set_done(request, MPI_PROC_NULL, MPI_ANY_TAG);
    return MPI_SUCCESS;
  }
  if (dest == s->rank) {
    detail::Operation* sync = nullptr;
    rc = detail::send_self(CommAccess::state(comm), buf, count, type, tag,
                           mode == Mode::synchronous, &sync);
    if (rc != MPI_SUCCESS) return rc;
    Request local;
    Request* r = request ? request : &local;
    if (sync)
      RequestAccess::set_op(r, sync, s->errcomm());
    else
      RequestAccess::set_done(r, MPI_ANY_SOURCE, MPI_ANY_TAG);
    return request ? MPI_SUCCESS : Wait(&local, MPI_STATUS_IGNORE);
  }
  int root_dest = s->to_root(dest);
  int wtag = 0;
  MPI_Comm lane = MPI_COMM_NULL;
  if (tag > TagLayout::max_payload ||
      !detail::fast_send_envelope(*s, dest, TagLayout::p2p, tag, &lane, &wtag)) {
    rc = detail::prepare_send(*s, dest, TagLayout::p2p, tag, &lane, &wtag);
    if (rc != MPI_SUCCESS) return detail::raise_mpi(s->errcomm(), rc, fn);
  }
  bool sync = mode == Mode::synchronous;
  if (request == nullptr && !detail::engine_busy()) {
    rc = sync ? MPI_Ssend(buf, count, type, root_dest, wtag, lane)
              : MPI_Send(buf, count, type, root_dest, wtag, lane);
    return detail::raise_mpi(s->errcomm(), rc, fn);
  }
  // Nonblocking, or blocking while the engine has work: a blocking send must not stop this
  // process's waiting receives and collectives, which the receiver may need to match it (the
  // torture test found two crossing synchronous sends, each to a wildcard receive).
  Request local;
  Request* r = request ? request : &local;
  MPI_Request native;
  rc = sync ? MPI_Issend(buf, count, type, root_dest, wtag, lane, &native)
            : MPI_Isend(buf, count, type, root_dest, wtag, lane, &native);
  if (rc != MPI_SUCCESS) return detail::raise_mpi(s->errcomm(), rc, fn);
  RequestAccess::set_native(r, native, false, MPI_ANY_SOURCE, MPI_ANY_TAG, s->errcomm());
  return request ? MPI_SUCCESS : Wait(&local, MPI_STATUS_IGNORE);
}

// receive_taken when something is out of MPI's queue.
[[gnu::noinline]] bool receive_taken_slow(const std::shared_ptr<RangeState>& sp, void* buf,
                                          int count, MPI_Datatype type, int source, int tag,
                                          Request* request, int* rc) {
  RangeState& s = *sp;
  if (source != s.rank) {
    int root_source = source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : s.to_root(source);
    detail::Parked p;
    if (detail::take_parked(s, TagLayout::p2p, root_source, tag, &p)) {
      MPI_Request native;
      *rc = detail::raise_mpi(s.errcomm(), MPI_Imrecv(buf, count, type, &p.message, &native),
                              "Irecv");
      if (*rc == MPI_SUCCESS)
        RequestAccess::set_native(request, native, true, s.from_root(p.root_source), p.payload,
                                  s.errcomm());
      return true;
    }
  }
  if ((source == s.rank || source == MPI_ANY_SOURCE) && s.match) {
    auto it = detail::find_self(*s.match, tag);
    if (it != s.match->self_queue.end()) {
      auto* op = new detail::RecvOp(sp, buf, count, type, source, tag);
      op->deliver_self(*it);
      s.match->self_queue.erase(it);
      RequestAccess::set_op(request, op, s.errcomm());
      *rc = MPI_SUCCESS;
      return true;
    }
  }
  return false;
}

// Takes a message that is already out of MPI's queue (parked, or sent to self), if one matches.
// The common case, nothing taken out of MPI and no self-message, is answered inline.
inline bool receive_taken(const std::shared_ptr<RangeState>& sp, void* buf, int count,
                          MPI_Datatype type, int source, int tag, Request* request, int* rc) {
  if (sp->channel->parked().empty() && !sp->match) return false;
  return receive_taken_slow(sp, buf, count, type, source, tag, request, rc);
}

// A blocking receive straight through MPI from rank `source` of s, which sends under `slot`;
// *status in the range's numbering.
[[gnu::always_inline]] inline int recv_direct(const RangeState& s, int slot, void* buf, int count,
                                              MPI_Datatype type, int source, int tag,
                                              MPI_Status* status, const char* fn) {
  MPI_Comm lane;
  int wtag;
  detail::receive_envelope(s, slot, TagLayout::p2p, tag, &lane, &wtag);
  int rc = MPI_Recv(buf, count, type, s.to_root(source), wtag, lane, status);
  if (status != MPI_STATUS_IGNORE) {  // the range's numbering, not the lane's
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
  }
  return detail::raise_mpi(s.errcomm(), rc, fn);
}

// Posts a receive. For a blocking call (blocking = true) on the direct path with nothing in the
// engine, receives at once with MPI_Recv into *status and leaves *request null.
int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm,
          Request* request, const char* fn, bool blocking = false,
          MPI_Status* status = MPI_STATUS_IGNORE) {
  RangeState* s = nullptr;
  int rc = check(comm, count, type, source, tag, Peer::recv, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (source == MPI_PROC_NULL) {
    RequestAccess::set_done(request, MPI_PROC_NULL, MPI_ANY_TAG);
    return MPI_SUCCESS;
  }
  const auto& sp = CommAccess::state(comm);
  if (receive_taken(sp, buf, count, type, source, tag, request, &rc)) return rc;
  bool engine = source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG || source == s->rank ||
                tag > TagLayout::max_payload || (s->match && !s->match->waiting.empty());
  int slot = engine ? -1 : detail::peer_slot(*s, source);
  // A blocking receive from a sender whose binding has not arrived, with nothing else to
  // advance: wait inside MPI for that sender's next message on the communicator's lane and take
  // it in, until the message is parked or the binding known.
  while (!engine && slot < 0 && blocking && !detail::engine_busy()) {
    rc = detail::take_next_from(*s->channel, detail::comm_lane(*s), s->to_root(source));
    if (rc != MPI_SUCCESS) return detail::raise_mpi(s->errcomm(), rc, fn);
    if (receive_taken(sp, buf, count, type, source, tag, request, &rc)) return rc;
    slot = detail::peer_slot(*s, source);
  }
  if (engine || slot < 0) {
    auto* op = new detail::RecvOp(sp, buf, count, type, source, tag);
    detail::enqueue_recv(*s, op);
    RequestAccess::set_op(request, op, s->errcomm());
    return MPI_SUCCESS;
  }
  if (blocking && !detail::engine_busy())
    return recv_direct(*s, slot, buf, count, type, source, tag, status, fn);
  MPI_Comm lane;
  int wtag;
  detail::receive_envelope(*s, slot, TagLayout::p2p, tag, &lane, &wtag);
  MPI_Request native;
  rc = MPI_Irecv(buf, count, type, s->to_root(source), wtag, lane, &native);
  if (rc == MPI_SUCCESS)
    RequestAccess::set_native(request, native, true, source, tag, s->errcomm());
  return detail::raise_mpi(s->errcomm(), rc, fn);
}

// Iprobe, and Improbe when message is not null.
int iprobe(int source, int tag, const Comm& comm, int* flag, Message* message, MPI_Status* status,
           const char* fn) {
  RangeState* s = nullptr;
  int rc = check(comm, 0, MPI_BYTE, source, tag, Peer::probe, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status st;
  *flag = 1;
  if (source == MPI_PROC_NULL) {
    detail::set_proc_null_status(&st);
    if (message) RequestAccess::set_no_proc(message);
    if (status != MPI_STATUS_IGNORE) *status = st;
    return MPI_SUCCESS;
  }
  detail::progress();  // engine receives claim their messages before a probe can see them
  if ((source == s->rank || source == MPI_ANY_SOURCE) && s->match) {
    auto it = detail::find_self(*s->match, tag);
    if (it != s->match->self_queue.end()) {
      detail::set_status(&st, s->rank, it->tag, it->bytes, MPI_SUCCESS);
      if (message) {
        if (it->sync) {  // a matched probe matches the synchronous sender
          it->sync->matched();
          it->sync->unref();
          it->sync = nullptr;
        }
        RequestAccess::set_self(message, new detail::SelfMessage(std::move(*it)), s->rank, it->tag,
                                s->errcomm());
        s->match->self_queue.erase(it);
      }
      if (status != MPI_STATUS_IGNORE) *status = st;
      return MPI_SUCCESS;
    }
  }
  *flag = 0;
  if (source == s->rank) return MPI_SUCCESS;
  int root_source = source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : s->to_root(source);
  bool engine_owns = s->match && !s->match->waiting.empty();
  bool direct = source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG && tag <= TagLayout::max_payload &&
                !engine_owns;
  int slot = direct ? detail::peer_slot(*s, source) : -1;
  direct = slot >= 0;
  if (!direct) detail::poll_range_lane(*s);
  detail::Parked p;
  const detail::Parked* seen = detail::peek_parked(*s, TagLayout::p2p, root_source, tag);
  if (seen) {
    *flag = 1;
    st = seen->status;
    st.MPI_SOURCE = s->from_root(seen->root_source);
    st.MPI_TAG = seen->payload;
    if (message) {
      detail::take_parked(*s, TagLayout::p2p, seen->root_source, seen->payload, &p);
      RequestAccess::set_native(message, p.message, st.MPI_SOURCE, st.MPI_TAG, s->errcomm());
    }
  } else if (direct) {
    MPI_Message native;
    MPI_Comm lane;
    int wtag;
    detail::receive_envelope(*s, slot, TagLayout::p2p, tag, &lane, &wtag);
    rc = message ? MPI_Improbe(root_source, wtag, lane, flag, &native, &st)
                 : MPI_Iprobe(root_source, wtag, lane, flag, &st);
    if (rc != MPI_SUCCESS) return detail::raise_mpi(s->errcomm(), rc, fn);
    st.MPI_SOURCE = source;
    st.MPI_TAG = tag;
    if (*flag && message) RequestAccess::set_native(message, native, source, tag, s->errcomm());
  }
  if (*flag && status != MPI_STATUS_IGNORE) *status = st;
  return MPI_SUCCESS;
}

int probe(int source, int tag, const Comm& comm, Message* message, MPI_Status* status,
          const char* fn) {
  int flag = 0;
  // Pauses as every wait does: under MPI_THREAD_MULTIPLE another thread of this process may
  // have to send the message probed for, and needs the library lock.
  detail::Backoff backoff;
  for (;;) {
    int rc = iprobe(source, tag, comm, &flag, message, status, fn);
    if (rc != MPI_SUCCESS || flag) return rc;
    backoff.pause();
  }
}

// Whether a message to or from rank `peer` of s with this count, type and tag is valid and needs
// nothing of the engine: the common case of Send and Recv, answered before the general path's
// checks (which give every other case, errors included, its full treatment).
[[gnu::always_inline]] inline bool plain_message(const RangeState* s, int count, MPI_Datatype type,
                                                 int peer, int tag) {
  return s != nullptr && count >= 0 && type != MPI_DATATYPE_NULL &&
         static_cast<unsigned>(peer) < static_cast<unsigned>(s->size) && peer != s->rank &&
         static_cast<unsigned>(tag) <= static_cast<unsigned>(TagLayout::max_payload) &&
         tag <= s->channel->user_tag_ub() && !s->channel->closed() && !detail::engine_busy();
}

}  // namespace

int Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm) {
  RangeState* s = CommAccess::of(comm);
  MPI_Comm lane;
  int wtag;
  if (plain_message(s, count, type, dest, tag) &&
      detail::fast_send_envelope(*s, dest, TagLayout::p2p, tag, &lane, &wtag))
    return detail::raise_mpi(s->errcomm(), MPI_Send(buf, count, type, s->to_root(dest), wtag, lane),
                             "Send");
  return send(buf, count, type, dest, tag, comm, Mode::standard, nullptr, "Send");
}

int Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm) {
  return send(buf, count, type, dest, tag, comm, Mode::synchronous, nullptr, "Ssend");
}

int Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm,
          Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Isend: request is null");
  return send(buf, count, type, dest, tag, comm, Mode::standard, request, "Isend");
}

int Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm,
           Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Issend: request is null");
  return send(buf, count, type, dest, tag, comm, Mode::synchronous, request, "Issend");
}

int Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm,
          Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Irecv: request is null");
  return irecv(buf, count, type, source, tag, comm, request, "Irecv");
}

int Recv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm,
         MPI_Status* status) {
  // From a member whose binding arrived, with nothing taken out of MPI's queue and no matching
  // engine on this communicator: straight to MPI.
  RangeState* s = CommAccess::of(comm);
  if (plain_message(s, count, type, source, tag) && !s->match && s->channel->parked().empty()) {
    const detail::PeerLink* link = s->peers.find(source);
    if (link != nullptr && link->slot >= 0)
      return recv_direct(*s, link->slot, buf, count, type, source, tag, status, "Recv");
  }
  Request request;
  int rc = irecv(buf, count, type, source, tag, comm, &request, "Recv", true, status);
  if (rc != MPI_SUCCESS || request.is_null()) return rc;
  return Wait(&request, status);
}

int Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
             const Comm& comm, MPI_Status* status) {
  Request requests[2];
  int rc = irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0], "Sendrecv");
  if (rc != MPI_SUCCESS) return rc;
  rc = send(sendbuf, sendcount, sendtype, dest, sendtag, comm, Mode::standard, &requests[1],
            "Sendrecv");
  if (rc != MPI_SUCCESS) return rc;
  int send_rc = Wait(&requests[1], MPI_STATUS_IGNORE);
  rc = Wait(&requests[0], status);
  return rc != MPI_SUCCESS ? rc : send_rc;
}

int Probe(int source, int tag, const Comm& comm, MPI_Status* status) {
  return probe(source, tag, comm, nullptr, status, "Probe");
}

int Iprobe(int source, int tag, const Comm& comm, int* flag, MPI_Status* status) {
  if (!flag) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Iprobe: flag is null");
  return iprobe(source, tag, comm, flag, nullptr, status, "Iprobe");
}

int Mprobe(int source, int tag, const Comm& comm, Message* message, MPI_Status* status) {
  if (!message) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Mprobe: message is null");
  return probe(source, tag, comm, message, status, "Mprobe");
}

int Improbe(int source, int tag, const Comm& comm, int* flag, Message* message,
            MPI_Status* status) {
  if (!flag || !message)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Improbe: flag or message is null");
  return iprobe(source, tag, comm, flag, message, status, "Improbe");
}

int Imrecv(void* buf, int count, MPI_Datatype type, Message* message, Request* request) {
  if (!message || !request)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Imrecv: message or request is null");
  return RequestAccess::receive(message, buf, count, type, request);
}

int Mrecv(void* buf, int count, MPI_Datatype type, Message* message, MPI_Status* status) {
  Request request;
  int rc = Imrecv(buf, count, type, message, &request);
  return rc != MPI_SUCCESS ? rc : Wait(&request, status);
}

}  // namespace rangecomm
