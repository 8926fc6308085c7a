// The communicator concept the sorting algorithms are written against, and its two backends:
// range communicators (rangecomm) and native MPI communicators (MPI_Comm_create_group or
// MPI_Comm_split). A backend B provides
//
//   B::Comm, B::Request, B::Message        default-constructed = null
//   attach(MPI_Comm, Comm*)                a private communicator over all of it (collective)
//   rank(c), size(c), is_null(c)
//   isend/irecv(bytes, peer, tag)          point-to-point on MPI_BYTE
//   improbe_any(tag, ...)  imrecv(...)     matched probe of any source, then its receive
//   test(Request*, bool*), wait(Request*)  test/wait advance every outstanding operation
//   iexscan_sum/iallreduce(...)/ibcast     the few nonblocking collectives the algorithms use
//   split(parent, left, right, &l, &r)     children of a parent: every member of the parent
//                                          calls it with the same spans (ranks of the parent,
//                                          sharing at most one process); each receives the
//                                          communicators it belongs to, null otherwise
//   free(Comm*)                            static, so that owners can free in destructors
#pragma once

#include <mpi.h>

#include <cstdint>

#include "rangecomm/rangecomm.hpp"

namespace rangecomm::jquick {

// Ranks first..last of a parent communicator; empty when last < first.
struct Span {
  int first = 0;
  int last = -1;
  bool empty() const { return last < first; }
  bool contains(int rank) const { return first <= rank && rank <= last; }
};

class RangeBackend {
 public:
  using Comm = rangecomm::Comm;
  using Request = rangecomm::Request;
  using Message = rangecomm::Message;

  // A fresh sub-range over the whole communicator, so the caller's own traffic on the range
  // Create_Comm returns never meets ours. Fails with MPI_ERR_COMM if the caller keeps such a
  // full range alive itself (docs/tag-layout.md, "the one pattern that is an error").
  int attach(MPI_Comm comm, Comm* out) {
    Comm whole;
    int err = Create_Comm(comm, &whole);
    if (err != MPI_SUCCESS) return err;
    return Split_Comm(whole, 0, whole.size() - 1, out);
  }
  static int rank(const Comm& c) { return c.rank(); }
  static int size(const Comm& c) { return c.size(); }
  static bool is_null(const Comm& c) { return c.is_null(); }

  int isend(const void* buf, int bytes, int dest, int tag, const Comm& c, Request* r) {
    return Isend(buf, bytes, MPI_BYTE, dest, tag, c, r);
  }
  int irecv(void* buf, int bytes, int source, int tag, const Comm& c, Request* r) {
    return Irecv(buf, bytes, MPI_BYTE, source, tag, c, r);
  }
  int improbe_any(int tag, const Comm& c, bool* found, Message* m, int* source, int* bytes) {
    int flag = 0;
    MPI_Status st;
    int err = Improbe(MPI_ANY_SOURCE, tag, c, &flag, m, &st);
    *found = flag != 0;
    if (err != MPI_SUCCESS || !flag) return err;
    *source = st.MPI_SOURCE;
    return MPI_Get_count(&st, MPI_BYTE, bytes);
  }
  int imrecv(void* buf, int bytes, Message* m, Request* r) {
    return Imrecv(buf, bytes, MPI_BYTE, m, r);
  }
  static int test(Request* r, bool* done) {
    int flag = 0;
    int err = Test(r, &flag, MPI_STATUS_IGNORE);
    *done = flag != 0;
    return err;
  }
  static int wait(Request* r) { return Wait(r, MPI_STATUS_IGNORE); }

  int iexscan_sum(const std::int64_t* in, std::int64_t* out, int n, const Comm& c, Request* r) {
    return Iexscan(in, out, n, MPI_INT64_T, MPI_SUM, c, r);
  }
  int iallreduce(const void* in, void* out, int n, MPI_Datatype t, MPI_Op op, const Comm& c,
                 Request* r) {
    return Iallreduce(in, out, n, t, op, c, r);
  }
  int ibcast(void* buf, int n, MPI_Datatype t, int root, const Comm& c, Request* r) {
    return Ibcast(buf, n, t, root, c, r);
  }

  // Local: each member creates the ranges it is in. Left and right share at most one process,
  // so they never clash (docs/tag-layout.md).
  int split(const Comm& parent, Span left, Span right, Comm* l, Comm* r) {
    int me = parent.rank();
    if (left.contains(me)) {
      int err = Split_Comm(parent, left.first, left.last, l);
      if (err != MPI_SUCCESS) return err;
    }
    if (right.contains(me)) return Split_Comm(parent, right.first, right.last, r);
    return MPI_SUCCESS;
  }
  static int free(Comm* c) { return c->is_null() ? MPI_SUCCESS : Comm_free(c); }
};

class NativeBackend {
 public:
  enum class Creation { create_group, split };
  explicit NativeBackend(Creation creation) : creation_(creation) {}

  struct Comm {
    MPI_Comm h = MPI_COMM_NULL;
  };
  struct Request {  // MPI_REQUEST_NULL is not 0 in MPICH: initialise explicitly
    MPI_Request h = MPI_REQUEST_NULL;
  };
  struct Message {
    MPI_Message h = MPI_MESSAGE_NULL;
  };

  int attach(MPI_Comm comm, Comm* out) { return MPI_Comm_dup(comm, &out->h); }
  static int rank(const Comm& c) {
    int r = MPI_UNDEFINED;
    MPI_Comm_rank(c.h, &r);
    return r;
  }
  static int size(const Comm& c) {
    int s = 0;
    MPI_Comm_size(c.h, &s);
    return s;
  }
  static bool is_null(const Comm& c) { return c.h == MPI_COMM_NULL; }

  int isend(const void* buf, int bytes, int dest, int tag, const Comm& c, Request* r) {
    return MPI_Isend(buf, bytes, MPI_BYTE, dest, tag, c.h, &r->h);
  }
  int irecv(void* buf, int bytes, int source, int tag, const Comm& c, Request* r) {
    return MPI_Irecv(buf, bytes, MPI_BYTE, source, tag, c.h, &r->h);
  }
  int improbe_any(int tag, const Comm& c, bool* found, Message* m, int* source, int* bytes) {
    int flag = 0;
    MPI_Status st;
    int err = MPI_Improbe(MPI_ANY_SOURCE, tag, c.h, &flag, &m->h, &st);
    *found = flag != 0;
    if (err != MPI_SUCCESS || !flag) return err;
    *source = st.MPI_SOURCE;
    return MPI_Get_count(&st, MPI_BYTE, bytes);
  }
  int imrecv(void* buf, int bytes, Message* m, Request* r) {
    return MPI_Imrecv(buf, bytes, MPI_BYTE, &m->h, &r->h);
  }
  static int test(Request* r, bool* done) {
    int flag = 0;
    int err = MPI_Test(&r->h, &flag, MPI_STATUS_IGNORE);
    *done = flag != 0;
    return err;
  }
  static int wait(Request* r) { return MPI_Wait(&r->h, MPI_STATUS_IGNORE); }

  int iexscan_sum(const std::int64_t* in, std::int64_t* out, int n, const Comm& c, Request* r) {
    return MPI_Iexscan(in, out, n, MPI_INT64_T, MPI_SUM, c.h, &r->h);
  }
  int iallreduce(const void* in, void* out, int n, MPI_Datatype t, MPI_Op op, const Comm& c,
                 Request* r) {
    return MPI_Iallreduce(in, out, n, t, op, c.h, &r->h);
  }
  int ibcast(void* buf, int n, MPI_Datatype t, int root, const Comm& c, Request* r) {
    return MPI_Ibcast(buf, n, t, root, c.h, &r->h);
  }

  // Blocking and collective: create_group over each new group (left first, so the one process
  // in both never makes the two groups wait for each other in a cycle); split twice over the
  // whole parent, non-members passing MPI_UNDEFINED.
  int split(const Comm& parent, Span left, Span right, Comm* l, Comm* r) {
    int me = rank(parent);
    if (creation_ == Creation::split) {
      int err = MPI_SUCCESS;
      if (!left.empty()) err = split_one(parent, left, me, l);
      if (err == MPI_SUCCESS && !right.empty()) err = split_one(parent, right, me, r);
      return err;
    }
    int err = MPI_SUCCESS;
    if (left.contains(me)) err = create_group(parent, left, kTagLeft, l);
    if (err == MPI_SUCCESS && right.contains(me)) err = create_group(parent, right, kTagRight, r);
    return err;
  }
  static int free(Comm* c) { return c->h == MPI_COMM_NULL ? MPI_SUCCESS : MPI_Comm_free(&c->h); }

 private:
  static constexpr int kTagLeft = 1, kTagRight = 2;

  static int split_one(const Comm& parent, Span span, int me, Comm* out) {
    return MPI_Comm_split(parent.h, span.contains(me) ? 0 : MPI_UNDEFINED, me, &out->h);
  }
  static int create_group(const Comm& parent, Span span, int tag, Comm* out) {
    MPI_Group all = MPI_GROUP_NULL, part = MPI_GROUP_NULL;
    int range[1][3] = {{span.first, span.last, 1}};
    int err = MPI_Comm_group(parent.h, &all);
    if (err == MPI_SUCCESS) err = MPI_Group_range_incl(all, 1, range, &part);
    if (err == MPI_SUCCESS) err = MPI_Comm_create_group(parent.h, part, tag, &out->h);
    if (part != MPI_GROUP_NULL) MPI_Group_free(&part);
    if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
    return err;
  }

  Creation creation_;
};

}  // namespace rangecomm::jquick
