// Gather and Gatherv. Gather: a binomial tree for small totals (ceil(log2 p) levels; the root
// takes that many messages instead of p - 1), a linear gather for large ones (every block
// crosses one link only). Gatherv: linear — only the root knows the counts, so no other process
// could forward a subtree's blocks.
//
// Tree intermediates hold their subtree's blocks as MPI_PACKED bytes: recvtype means nothing
// off the root, and a typed message may be received as MPI_PACKED, a packed one with any type of
// the same signature. Only the root receives typed data; a subtree whose blocks wrap past the
// last rank reaches the root as two messages, so that each lands in one stretch of recvbuf.
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable gather_short_bytes{"GATHER_SHORT_BYTES", 65536};
}  // namespace tune

using detail::Plan;

using detail::block_at;
using detail::bytes_of;
using detail::lowest_bit;
using detail::subtree_span;

// What the root receives: the root's own block, and each child's subtree of blocks straight
// into recvbuf (split where the subtree wraps past the last rank).
void add_tree_root(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, int size) {
  if (sendbuf != MPI_IN_PLACE)
    s.copy(sendbuf, sendcount, sendtype, block_at(recvbuf, 1LL * root * recvcount, recvtype),
           recvcount, recvtype);
  for (int m = 1; m < size; m <<= 1) {
    int first = (root + m) % size, span = subtree_span(m, size);
    int head = std::min(span, size - first);  // blocks before the wrap
    s.recv(block_at(recvbuf, 1LL * first * recvcount, recvtype), head * recvcount, recvtype, first);
    if (head < span) s.recv(recvbuf, (span - head) * recvcount, recvtype, first);
  }
}

// A non-root v: collect its children's blocks behind its own, then pass them all up. The blocks
// must lie side by side and may be received typed only if sendtype cannot overlap itself (MPI
// forbids overlapping receive buffers), so a contiguous type's blocks are kept as they are (a
// packed or typed message is received typed when the signatures match, MPI 3.1 section 4.2);
// any other type's are packed (its own block with MPI_Pack, the children's as MPI_PACKED).
void add_tree_member(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     MPI_Comm pack_comm, int root, int rank, int size) {
  int v = detail::relative(rank, root, size), span = subtree_span(v, size);
  int parent = detail::absolute(v - lowest_bit(v, size), root, size);
  if (span == 1) {  // a leaf sends its block as it is
    s.send(sendbuf, sendcount, sendtype, parent);
    return;
  }
  // The blocks' layout: `count` elements of `type` per block, `stride` bytes apart.
  detail::TypeFacts t = detail::type_facts(sendtype);
  int count = sendcount;
  MPI_Datatype type = sendtype;
  MPI_Aint stride = sendcount * t.extent;
  char* blocks = nullptr;
  if (t.contiguous()) {
    blocks = static_cast<char*>(s.scratch(span * count, type));
    s.copy(sendbuf, sendcount, sendtype, blocks, count, type);
  } else {
    int bound = 0;
    MPI_Pack_size(sendcount, sendtype, pack_comm, &bound);
    blocks = static_cast<char*>(s.scratch(span * bound, MPI_PACKED));
    int block = 0;  // exact packed size of one block; the same for every block of this signature
    // The send buffer holds its data from the call on, so the own block is packed right away.
    detail::pack_typed(sendbuf, sendcount, sendtype, blocks, span * bound, &block);
    count = block;
    type = MPI_PACKED;
    stride = block;
  }
  auto at = [&](int b) { return blocks + b * stride; };
  for (int m = 1; m < lowest_bit(v, size) && v + m < size; m <<= 1)
    s.recv(at(m), subtree_span(v + m, size) * count, type, detail::absolute(v + m, root, size));
  s.end_round();
  int first = detail::absolute(v, root, size);
  int head = parent == root ? std::min(span, size - first) : span;  // blocks before the wrap
  s.send(blocks, head * count, type, parent);
  if (head < span) s.send(at(head), (span - head) * count, type, parent);
}

// The binomial gather of add_tree_root and add_tree_member (the same messages, tags and
// buffers), through MPI's blocking calls without a plan; for a total of at most kDirectTreeBytes,
// whose intermediates' blocks (a predefined contiguous type) fit on the stack. Only when it can
// go the whole way: a Runner would be available, and no message needs a binding or a header
// or finds a message taken out of MPI before it. Then *rc is its result (not yet raised) and
// the answer true; otherwise it does nothing and says false. A process receives its children's
// subtrees one after another: a child's send waits for nothing but its own subtree.
// `t` holds the facts of the type this process's blocks are counted in: recvtype at the root,
// sendtype elsewhere. Inlined into its one caller, whose checks and choice it continues.
[[gnu::always_inline]] inline bool direct_tree_gather(
    detail::RangeState& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    int recvcount, MPI_Datatype recvtype, const detail::TypeFacts& t, int root, int* rc) {
  using detail::absolute;
  if (!detail::direct_tree_ready(s)) return false;
  const int size = s.size, v = detail::relative(s.rank, root, size), low = lowest_bit(v, size);
  const int span = std::min(low, size - v), parent = absolute(v - low, root, size);
  if (v != 0 && span > 1 && !(t.predefined && t.contiguous())) return false;
  const int seq = detail::peek_collective_seq(s);
  MPI_Comm lanes[32];  // from each child, nearest first
  int tags[32], from[32], ranks[32], children = 0;
  for (int m = 1; m < low && v + m < size; m <<= 1, ++children) {
    const int child = absolute(v + m, root, size);
    int slot = detail::peer_slot(s, child);
    if (slot < 0) return false;
    detail::receive_envelope(s, slot, detail::TagLayout::collective, seq, &lanes[children],
                             &tags[children]);
    ranks[children] = child;
    from[children] = s.to_root(child);
  }
  MPI_Comm up_lane = MPI_COMM_NULL;
  int up_tag = 0;
  if (v != 0 &&
      !detail::fast_send_envelope(s, parent, detail::TagLayout::collective, seq, &up_lane, &up_tag))
    return false;
  detail::next_collective_seq(s);
  *rc = MPI_SUCCESS;
  auto receive = [&](int k, void* buf, int count, MPI_Datatype type) {
    if (*rc == MPI_SUCCESS)
      *rc = MPI_Recv(buf, count, type, from[k], tags[k], lanes[k], MPI_STATUS_IGNORE);
  };
  if (v == 0) {  // into recvbuf, each subtree split where it wraps past the last rank
    char* const out = static_cast<char*>(recvbuf);
    const MPI_Aint stride = recvcount * t.extent;  // from one block of recvbuf to the next
    if (sendbuf != MPI_IN_PLACE)
      *rc = detail::local_copy(sendbuf, sendcount, sendtype, out + root * stride, recvcount,
                               recvtype, t);
    for (int k = 0; k < children; ++k) {
      const int first = ranks[k], child_span = subtree_span(1 << k, size);
      const int head = std::min(child_span, size - first);
      receive(k, out + first * stride, head * recvcount, recvtype);
      if (head < child_span) receive(k, out, (child_span - head) * recvcount, recvtype);
    }
    return true;
  }
  const int to = s.to_root(parent);
  if (span == 1) {
    *rc = MPI_Send(sendbuf, sendcount, sendtype, to, up_tag, up_lane);
    return true;
  }
  unsigned char blocks[detail::kDirectTreeBytes];  // this subtree's blocks, own first
  const MPI_Aint block = sendcount * t.extent;
  std::memcpy(blocks, sendbuf, static_cast<size_t>(block));
  for (int k = 0; k < children; ++k)
    receive(k, blocks + (1 << k) * block, subtree_span(v + (1 << k), size) * sendcount, sendtype);
  const int head = parent == root ? std::min(span, size - s.rank) : span;  // before the wrap
  if (*rc == MPI_SUCCESS) *rc = MPI_Send(blocks, head * sendcount, sendtype, to, up_tag, up_lane);
  if (*rc == MPI_SUCCESS && head < span)
    *rc = MPI_Send(blocks + head * block, (span - head) * sendcount, sendtype, to, up_tag, up_lane);
  return true;
}

void add_linear(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, int rank,
                int size) {
  if (rank != root) {
    if (bytes_of(sendcount, sendtype) > 0) s.send(sendbuf, sendcount, sendtype, root);
    return;
  }
  for (int i = 0; i < size; ++i) {
    void* block = block_at(recvbuf, displs[i], recvtype);
    if (i == root) {
      if (sendbuf != MPI_IN_PLACE)
        s.copy(sendbuf, sendcount, sendtype, block, recvcounts[i], recvtype);
    } else if (bytes_of(recvcounts[i], recvtype) > 0) {
      s.recv(block, recvcounts[i], recvtype, i);
    }
  }
}

detail::Forced forced{"GATHER", detail::kRootedNames};

// A gather by a plan: nothing to move (block 0), a binomial tree (tree) or a linear gather (out
// of line: the small blocking gathers that go without one, below, then keep their call lean).
[[gnu::noinline]] int planned_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                     const Comm& comm, Request* request, long long block,
                                     bool tree) {
  const detail::RangeState* s = detail::CommAccess::of(comm);
  const bool is_root = s->rank == root;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (block == 0) {
      // nothing to move
    } else if (tree) {
      if (is_root)
        add_tree_root(plan, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                      s->size);
      else
        add_tree_member(plan, sendbuf, sendcount, sendtype, s->channel->lane(0).comm, root, s->rank,
                        s->size);
    } else {
      std::vector<int> counts, displs;
      if (is_root) {
        counts.assign(s->size, recvcount);
        for (int i = 0; i < s->size; ++i) displs.push_back(i * recvcount);
      }
      add_linear(plan, sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(),
                 recvtype, root, s->rank, s->size);
    }
  });
}

int gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc =
      detail::check_rooted(comm, sendbuf, sendcount, sendtype, recvbuf, "recvbuf", root, fn, &s);
  bool is_root = rc == MPI_SUCCESS && s->rank == root;
  if (is_root) rc = detail::check_buffer(*s, recvcount, recvtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  // Every process sees the same block size: equal type signatures.
  const detail::TypeFacts facts = detail::type_facts(is_root ? recvtype : sendtype);
  const long long block = static_cast<long long>(is_root ? recvcount : sendcount) * facts.size;
  const long long total = block * s->size;
  const bool tree = block > 0 && detail::choose_rooted(forced, total, tune::gather_short_bytes()) ==
                                     detail::RootedAlgorithm::binomial;
  if (request == nullptr && tree && total <= detail::kDirectTreeBytes &&
      direct_tree_gather(*s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, facts,
                         root, &rc))
    return detail::runner_result(comm, rc);
  return planned_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request, block, tree);
}

int gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
            const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc =
      detail::check_rooted(comm, sendbuf, sendcount, sendtype, recvbuf, "recvbuf", root, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (s->rank == root) {
    if (recvcounts == nullptr || displs == nullptr)
      return detail::raise(s->errcomm(), MPI_ERR_ARG, "%s: recvcounts or displs is null", fn);
    for (int i = 0; i < s->size && rc == MPI_SUCCESS; ++i)
      rc = detail::check_buffer(*s, recvcounts[i], recvtype, fn);
    if (rc != MPI_SUCCESS) return rc;
  }
  return detail::run(comm, request, [&](detail::Plan& plan) {
    add_linear(plan, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
               s->rank, s->size);
  });
}

}  // namespace

int Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, const Comm& comm) {
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr,
                "Gather");
}

int Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Igather: request is null");
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                "Igather");
}

int Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
            const Comm& comm) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 nullptr, "Gatherv");
}

int Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Igatherv: request is null");
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 request, "Igatherv");
}

}  // namespace rangecomm
