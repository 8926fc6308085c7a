// Building and reading Request and Message objects inside the library.
#pragma once

#include "engine/operation.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm::detail {

struct SelfMessage;

struct RequestAccess {
  static void set_done(Request* r, int source, int tag) {
    set(r, Request::Kind::done, source, tag, MPI_REQUEST_NULL, nullptr, MPI_COMM_NULL);
  }
  // errcomm: whose error handler hears of a failure found at completion.
  static void set_native(Request* r, MPI_Request native, bool is_recv, int source, int tag,
                         MPI_Comm errcomm) {
    set(r, is_recv ? Request::Kind::native_recv : Request::Kind::native_send, source, tag, native,
        nullptr, errcomm);
  }
  // Takes over the caller's reference to op.
  static void set_op(Request* r, Operation* op, MPI_Comm errcomm) {
    set(r, Request::Kind::op, MPI_PROC_NULL, MPI_ANY_TAG, MPI_REQUEST_NULL, op, errcomm);
  }
  // Every field, after releasing what r held (nothing, for the fresh or completed request a
  // call is given: the test is all it costs).
  static void set(Request* r, Request::Kind kind, int source, int tag, MPI_Request native,
                  Operation* op, MPI_Comm errcomm) {
    if (r->kind_ != Request::Kind::null) r->release();
    r->kind_ = kind;
    r->source_ = source;
    r->tag_ = tag;
    r->native_ = native;
    r->op_ = op;
    r->errcomm_ = errcomm;
  }
  static void set_no_proc(Message* m) {
    *m = Message();
    m->kind_ = Message::Kind::no_proc;
  }
  static void set_native(Message* m, MPI_Message native, int source, int tag, MPI_Comm errcomm) {
    *m = Message();
    m->kind_ = Message::Kind::native;
    m->native_ = native;
    m->source_ = source;
    m->tag_ = tag;
    m->errcomm_ = errcomm;
  }
  static void set_self(Message* m, SelfMessage* self, int source, int tag, MPI_Comm errcomm) {
    *m = Message();
    m->kind_ = Message::Kind::self;
    m->self_ = self;
    m->source_ = source;
    m->tag_ = tag;
    m->errcomm_ = errcomm;
  }
  static MPI_Comm errcomm(const Request& r) { return r.errcomm_; }

  // Completion of one request (defined in request.cpp); a failure also goes to the handler.
  static bool test(Request& r, MPI_Status* status, int* rc);
  static bool complete(Request& r, MPI_Status* status, int* rc);
  // Blocks in MPI_Wait when r is an MPI request (returns false otherwise).
  static bool wait_native(Request& r, MPI_Status* status, int* rc);
  // Whether test() would complete r, without completing it.
  static bool is_complete(Request& r);
  static void cancel(Request& r);
  // Receives a probed message (defined in p2p/message.cpp).
  static int receive(Message* m, void* buf, int count, MPI_Datatype type, Request* request);
};

}  // namespace rangecomm::detail
