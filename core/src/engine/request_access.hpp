// Building and reading Request and Message objects inside the library.
#pragma once

#include "engine/operation.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm::detail {

struct SelfMessage;

struct RequestAccess {
  static void set_done(Request* r, int source, int tag) {
    *r = Request();
    r->kind_ = Request::Kind::done;
    r->source_ = source;
    r->tag_ = tag;
  }
  // errcomm: whose error handler hears of a failure found at completion.
  static void set_native(Request* r, MPI_Request native, bool is_recv, int source, int tag,
                         MPI_Comm errcomm) {
    *r = Request();
    r->kind_ = is_recv ? Request::Kind::native_recv : Request::Kind::native_send;
    r->native_ = native;
    r->source_ = source;
    r->tag_ = tag;
    r->errcomm_ = errcomm;
  }
  // Takes over the caller's reference to op.
  static void set_op(Request* r, Operation* op, MPI_Comm errcomm) {
    *r = Request();
    r->kind_ = Request::Kind::op;
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
