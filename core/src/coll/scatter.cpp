// Scatter and Scatterv. Scatter: a binomial tree for small totals (ceil(log2 p) levels), a
// linear scatter for large ones (every block crosses one link only). Scatterv: linear — only
// the root knows the counts, so no other process could forward a subtree's blocks.
//
// The tree is gather's run backwards. Each process gets its own block as a typed message of its
// own, straight into recvbuf, and the rest of its subtree's blocks as MPI_PACKED bytes (sendtype
// means nothing off the root; a packed message matches any type of the same signature). Blocks
// the root sends that wrap past the last rank go as two messages, each from one stretch of
// sendbuf.
#include <climits>
#include <vector>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable scatter_short_bytes{"SCATTER_SHORT_BYTES", 65536};
}  // namespace tune

using detail::Plan;

using detail::block_at;
using detail::bytes_of;
using detail::lowest_bit;
using detail::subtree_span;

void add_tree_root(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, int size) {
  if (recvbuf != MPI_IN_PLACE)
    s.copy(block_at(sendbuf, 1LL * root * sendcount, sendtype), sendcount, sendtype, recvbuf,
           recvcount, recvtype);
  for (int m = 1; m < size; m <<= 1) {
    int child = (root + m) % size, rest = subtree_span(m, size) - 1;
    s.send(block_at(sendbuf, 1LL * child * sendcount, sendtype), sendcount, sendtype, child);
    if (rest == 0) continue;
    int first = (child + 1) % size, head = std::min(rest, size - first);  // before the wrap
    s.send(block_at(sendbuf, 1LL * first * sendcount, sendtype), head * sendcount, sendtype, child);
    if (head < rest) s.send(sendbuf, (rest - head) * sendcount, sendtype, child);
  }
}

// A non-root v: its own block, then the blocks of v + 1 .. v + span - 1, which it hands on to
// its children the same way. As in the gather tree, a contiguous type's blocks are received
// typed (a packed or typed message is received typed when the signatures match, MPI 3.1
// section 4.2); any other type's as MPI_PACKED, since a type that overlaps itself may not be
// received into, and the blocks must lie side by side. The root sends them typed, so their
// packed bytes are the bytes of their elements one block after another (as bcast takes them);
// MPI_Pack_size is only an upper bound, and a block size taken from it cut the blocks at the
// wrong places where it is larger (SimGrid's MPI gives a resized type's extent).
void add_tree_member(Plan& s, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                     int rank, int size) {
  int v = detail::relative(rank, root, size), rest = subtree_span(v, size) - 1;
  int parent = detail::absolute(v - lowest_bit(v, size), root, size);
  s.recv(recvbuf, recvcount, recvtype, parent);
  if (rest == 0) return;
  detail::TypeFacts t = detail::type_facts(recvtype);
  // The blocks' layout: `count` elements of `type` per block, `stride` bytes apart.
  int count = recvcount;
  MPI_Datatype type = recvtype;
  MPI_Aint stride = recvcount * t.extent;
  if (!t.contiguous()) {
    int block = static_cast<int>(bytes_of(recvcount, recvtype));  // packed bytes of one block
    count = block;
    type = MPI_PACKED;
    stride = block;
  }
  char* blocks = static_cast<char*>(s.scratch(rest * count, type));
  auto at = [&](int b) { return blocks + b * stride; };
  int first = (rank + 1) % size;
  int head = parent == root ? std::min(rest, size - first) : rest;
  s.recv(blocks, head * count, type, parent);
  if (head < rest) s.recv(at(head), (rest - head) * count, type, parent);
  s.end_round();
  // Child v + m's blocks start at block m - 1.
  for (int m = 1; m < lowest_bit(v, size) && v + m < size; m <<= 1) {
    int child = detail::absolute(v + m, root, size), child_rest = subtree_span(v + m, size) - 1;
    s.send(at(m - 1), count, type, child);
    if (child_rest > 0) s.send(at(m), child_rest * count, type, child);
  }
}

void add_linear(Plan& s, const void* sendbuf, const int* sendcounts, const int* displs,
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, int rank, int size) {
  if (rank != root) {
    if (bytes_of(recvcount, recvtype) > 0) s.recv(recvbuf, recvcount, recvtype, root);
    return;
  }
  for (int i = 0; i < size; ++i) {
    const char* block = block_at(sendbuf, displs[i], sendtype);
    if (i == root) {
      if (recvbuf != MPI_IN_PLACE)
        s.copy(block, sendcounts[i], sendtype, recvbuf, recvcount, recvtype);
    } else if (bytes_of(sendcounts[i], sendtype) > 0) {
      s.send(block, sendcounts[i], sendtype, i);
    }
  }
}

detail::Forced forced{"SCATTER", detail::kRootedNames};

int scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc =
      detail::check_rooted(comm, recvbuf, recvcount, recvtype, sendbuf, "sendbuf", root, fn, &s);
  bool is_root = rc == MPI_SUCCESS && s->rank == root;
  if (is_root) rc = detail::check_buffer(*s, sendcount, sendtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  // Every process sees the same block size: equal type signatures.
  long long block = is_root ? bytes_of(sendcount, sendtype) : bytes_of(recvcount, recvtype);
  long long total = block * s->size;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (block == 0) {
      // nothing to move
    } else if (detail::choose_rooted(forced, total, tune::scatter_short_bytes()) ==
               detail::RootedAlgorithm::binomial) {
      if (is_root)
        add_tree_root(plan, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                      s->size);
      else
        add_tree_member(plan, recvbuf, recvcount, recvtype, root, s->rank, s->size);
    } else {
      std::vector<int> counts, displs;
      if (is_root) {
        counts.assign(s->size, sendcount);
        for (int i = 0; i < s->size; ++i) displs.push_back(i * sendcount);
      }
      add_linear(plan, sendbuf, counts.data(), displs.data(), sendtype, recvbuf, recvcount,
                 recvtype, root, s->rank, s->size);
    }
  });
}

int scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, const Comm& comm,
             Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc =
      detail::check_rooted(comm, recvbuf, recvcount, recvtype, sendbuf, "sendbuf", root, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (s->rank == root) {
    if (sendcounts == nullptr || displs == nullptr)
      return detail::raise(s->errcomm(), MPI_ERR_ARG, "%s: sendcounts or displs is null", fn);
    for (int i = 0; i < s->size && rc == MPI_SUCCESS; ++i)
      rc = detail::check_buffer(*s, sendcounts[i], sendtype, fn);
    if (rc != MPI_SUCCESS) return rc;
  }
  return detail::run(comm, request, [&](detail::Plan& plan) {
    add_linear(plan, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
               s->rank, s->size);
  });
}

}  // namespace

int Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const Comm& comm) {
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr,
                 "Scatter");
}

int Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iscatter: request is null");
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                 "Iscatter");
}

int Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, const Comm& comm) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  nullptr, "Scatterv");
}

int Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iscatterv: request is null");
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  request, "Iscatterv");
}

}  // namespace rangecomm
