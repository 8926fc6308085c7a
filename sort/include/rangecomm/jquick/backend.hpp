// The communicator concept the sorting algorithms are written against, and its two backends:
// range communicators (rangecomm) and native MPI communicators (MPI_Comm_create_group or
// MPI_Comm_split). A backend B provides
//
//   B::Comm, B::Request, B::Message        default-constructed = null
//   attach(MPI_Comm, Comm*)                the sorts' private communicator over all of it
//                                          (collective the first time; borrowed, never freed)
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

// The sorts' own duplicate of comm: made by the first sort on comm (collective, like the sort),
// then cached as an attribute of comm and freed with it (or at MPI_Finalize). The sorts' traffic
// and ranges then live on MPI contexts of their own, so they can never meet the caller's
// messages on comm, nor clash with ranges the caller keeps alive on comm (docs/tag-layout.md,
// "the one pattern that is an error"). Not thread-safe for concurrent first use of one comm.
inline int private_comm(MPI_Comm comm, MPI_Comm* out) {
  static const int keyval = [] {
    auto drop = [](MPI_Comm, int, void* value, void*) -> int {
      auto* dup = static_cast<MPI_Comm*>(value);
      int err = MPI_Comm_free(dup);
      delete dup;
      return err;
    };
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop, &k, nullptr);
    return k;
  }();
  if (keyval == MPI_KEYVAL_INVALID) return MPI_ERR_KEYVAL;
  void* value = nullptr;
  int found = 0;
  int err = MPI_Comm_get_attr(comm, keyval, &value, &found);
  if (err != MPI_SUCCESS) return err;
  if (found) {
    *out = *static_cast<MPI_Comm*>(value);
    return MPI_SUCCESS;
  }
  auto* dup = new MPI_Comm(MPI_COMM_NULL);
  err = MPI_Comm_dup(comm, dup);
  if (err == MPI_SUCCESS) err = MPI_Comm_set_attr(comm, keyval, dup);
  if (err != MPI_SUCCESS) {
    if (*dup != MPI_COMM_NULL) MPI_Comm_free(dup);
    delete dup;
    return err;
  }
  *out = *dup;
  return MPI_SUCCESS;
}

class RangeBackend {
 public:
  using Comm = rangecomm::Comm;
  using Request = rangecomm::Request;
  using Message = rangecomm::Message;

  // The range over all of the sort's private communicator (see private_comm). Borrowed: the
  // caller drops the handle and never frees it.
  int attach(MPI_Comm comm, Comm* out) {
    MPI_Comm priv = MPI_COMM_NULL;
    int err = private_comm(comm, &priv);
    return err == MPI_SUCCESS ? Create_Comm(priv, out) : err;
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

  // The sort's private communicator (see private_comm). Borrowed: the caller never frees it.
  int attach(MPI_Comm comm, Comm* out) { return private_comm(comm, &out->h); }
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
