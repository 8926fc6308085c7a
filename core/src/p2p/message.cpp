// Message handles of matched probes (MPI_Mprobe, MPI_Improbe) and their receives: a message
// still in MPI, one the process sent to itself, or none (MPI_PROC_NULL).
#include "engine/request_access.hpp"
#include "p2p/matching.hpp"
#include "util/errors.hpp"

namespace rangecomm {

namespace {

// An operation that was complete when it was made (a receive of a message sent to self).
class DoneOp final : public detail::Operation {
 public:
  DoneOp(const MPI_Status& st, int rc) : status_(st), rc_(rc) {}
  bool test(MPI_Status* status, int* rc) override {
    *status = status_;
    *rc = rc_;
    return true;
  }
  void cancel() override {}

 private:
  MPI_Status status_;
  int rc_;
};

}  // namespace

Message& Message::operator=(Message&& other) noexcept {
  if (this != &other) {
    release();
    take(other);
  }
  return *this;
}

Message::~Message() { release(); }

void Message::take(Message& other) noexcept {
  kind_ = other.kind_;
  source_ = other.source_;
  tag_ = other.tag_;
  native_ = other.native_;
  self_ = other.self_;
  errcomm_ = other.errcomm_;
  other.kind_ = Kind::null;
  other.native_ = MPI_MESSAGE_NULL;
  other.self_ = nullptr;
}

void Message::release() noexcept {
  // A probed message that is never received is consumed here, so it cannot clog MPI's queue.
  if (kind_ == Kind::native && native_ != MPI_MESSAGE_NULL)
    MPI_Mrecv(nullptr, 0, MPI_BYTE, &native_, MPI_STATUS_IGNORE);
  delete self_;
  kind_ = Kind::null;
  native_ = MPI_MESSAGE_NULL;
  self_ = nullptr;
}

namespace detail {

int RequestAccess::receive(Message* m, void* buf, int count, MPI_Datatype type, Request* request) {
  switch (m->kind_) {
    case Message::Kind::null:
      return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Mrecv/Imrecv: the message is null");
    case Message::Kind::no_proc:
      set_done(request, MPI_PROC_NULL, MPI_ANY_TAG);
      break;
    case Message::Kind::native: {
      MPI_Request native;
      int rc = MPI_Imrecv(buf, count, type, &m->native_, &native);
      if (rc != MPI_SUCCESS) return raise_mpi(MPI_COMM_WORLD, rc, "Mrecv/Imrecv");
      set_native(request, native, true, m->source_, m->tag_, m->errcomm_);
      break;
    }
    case Message::Kind::self: {
      MPI_Status st;
      int rc = unpack_self(*m->self_, m->source_, buf, count, type, &st);
      set_op(request, new DoneOp(st, rc), m->errcomm_);
      break;
    }
  }
  *m = Message();
  return MPI_SUCCESS;
}

}  // namespace detail

}  // namespace rangecomm
