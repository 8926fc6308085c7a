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
// or finds a message taken out of MPI before it. A process receives its children's subtrees
// one after another: a child's send waits for nothing but its own subtree.
//
// Its envelopes (the children's ranks and the lanes and tags of their messages, the parent's
// rank and tag; the tags but for the sequence number) and the arguments that shape it are kept
// for the same call again (common.hpp: RememberingCollective), which then skips the argument
// checks it passed, the algorithm choice and the tree.
struct DirectGather {
  unsigned generation = 0;
  int root = 0;
  bool in_place = false;  // the root's sendbuf is MPI_IN_PLACE
  int sendcount = 0, recvcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL, recvtype = MPI_DATATYPE_NULL;
  detail::TypeFacts t;  // of the type blocks are counted in: recvtype at the root, else sendtype
  long long own_bytes = -1;  // the root's own block as bytes to copy, -1: through local_copy
  int v = 0;                 // this process's rank relative to the root (0: the root)
  int span = 1;              // its subtree's blocks
  int children = 0;          // nearest first: range rank, its slot, its rank in the lane, tag, lane
  int child[detail::kMaxRelayTargets], slot[detail::kMaxRelayTargets];
  int from[detail::kMaxRelayTargets], tag[detail::kMaxRelayTargets];
  MPI_Comm lane[detail::kMaxRelayTargets];
  // The blocks of each child's subtree: at the root, before and after the wrap past the last
  // rank (each received into its own stretch of recvbuf); elsewhere, all of them (`first`).
  int first[detail::kMaxRelayTargets], second[detail::kMaxRelayTargets];
  int to = 0, up_tag = 0;  // the parent's rank in the lane and the tag of the messages to it
  int head = 0;            // of the blocks sent up, those before the wrap past the last rank
};
DirectGather g_direct_gather;

int receive_child(const DirectGather& d, int k, int seq, void* buf, int count, MPI_Datatype type) {
  return MPI_Recv(buf, count, type, d.from[k], d.tag[k] | seq, d.lane[k], MPI_STATUS_IGNORE);
}

// The root's part: its own block copied, each child's subtree received into recvbuf.
int direct_gather_root(const DirectGather& d, int seq, const void* sendbuf, void* recvbuf) {
  char* const out = static_cast<char*>(recvbuf);
  const MPI_Aint stride = d.recvcount * d.t.extent;  // from one block of recvbuf to the next
  int rc = MPI_SUCCESS;
  if (!d.in_place && d.own_bytes >= 0)
    std::memmove(out + d.root * stride, sendbuf, static_cast<size_t>(d.own_bytes));
  else if (!d.in_place)
    rc = detail::local_copy(sendbuf, d.sendcount, d.sendtype, out + d.root * stride, d.recvcount,
                            d.recvtype, d.t);
  for (int k = 0; rc == MPI_SUCCESS && k < d.children; ++k) {
    rc = receive_child(d, k, seq, out + d.child[k] * stride, d.first[k] * d.recvcount, d.recvtype);
    if (rc == MPI_SUCCESS && d.second[k] > 0)
      rc = receive_child(d, k, seq, out, d.second[k] * d.recvcount, d.recvtype);
  }
  return rc;
}

// An inner process's part: its own block and its children's subtrees side by side on the stack,
// then sent up (out of line: its buffer stays off the frame of the root's and leaves' calls).
[[gnu::noinline]] int direct_gather_inner(const detail::RangeState& s, const DirectGather& d,
                                          int seq, const void* sendbuf) {
  unsigned char blocks[detail::kDirectTreeBytes];  // this subtree's blocks, own first
  const MPI_Aint block = d.sendcount * d.t.extent;
  std::memcpy(blocks, sendbuf, static_cast<size_t>(block));
  int rc = MPI_SUCCESS;
  for (int k = 0; rc == MPI_SUCCESS && k < d.children; ++k)
    rc = receive_child(d, k, seq, blocks + (1 << k) * block, d.first[k] * d.sendcount, d.sendtype);
  if (rc == MPI_SUCCESS)
    rc = MPI_Send(blocks, d.head * d.sendcount, d.sendtype, d.to, d.up_tag | seq, s.send_lane);
  if (rc == MPI_SUCCESS && d.head < d.span)
    rc = MPI_Send(blocks + d.head * block, (d.span - d.head) * d.sendcount, d.sendtype, d.to,
                  d.up_tag | seq, s.send_lane);
  return rc;
}

// The gather through MPI's calls with envelopes d (the tags' sequence number taken here).
int direct_gather(detail::RangeState& s, const DirectGather& d, const void* sendbuf,
                  void* recvbuf) {
  const int seq = detail::next_collective_seq(s);
  if (d.v == 0) return direct_gather_root(d, seq, sendbuf, recvbuf);
  if (d.span == 1)
    return MPI_Send(sendbuf, d.sendcount, d.sendtype, d.to, d.up_tag | seq, s.send_lane);
  return direct_gather_inner(s, d, seq, sendbuf);
}

// Whether this call repeats the gather whose envelopes are kept, on a state they still hold for,
// with a direct tree possible now.
bool repeats_direct_gather(const detail::RangeState* s, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root) {
  const DirectGather& d = g_direct_gather;
  if (!detail::remembered_and_ready(s, detail::kRememberedGather, d.generation) || root != d.root)
    return false;
  const bool in_place = sendbuf == MPI_IN_PLACE;  // the root's only: elsewhere an error
  if (in_place != d.in_place || (!in_place && (sendcount != d.sendcount || sendtype != d.sendtype)))
    return false;
  if (d.v == 0 && (recvbuf == MPI_IN_PLACE || recvcount != d.recvcount || recvtype != d.recvtype))
    return false;
  for (int k = 0; k < d.children; ++k)
    if (!detail::peer_sends_under(*s, d.child[k], d.slot[k])) return false;
  return true;
}

// Makes the envelopes of a direct gather from `root` into *d; false (d unusable) when a message
// would need a binding or a header, or a child's slot is not yet known.
bool direct_gather_envelopes(detail::RangeState& s, int root, DirectGather* d) {
  using detail::absolute;
  const int size = s.size, v = detail::relative(s.rank, root, size), low = lowest_bit(v, size);
  const int seq = 0;  // the tags below are made without it (the payload's bits)
  d->v = v;
  d->span = std::min(low, size - v);
  d->children = 0;
  for (int m = 1; m < low && v + m < size; m <<= 1, ++d->children) {
    const int k = d->children, child = absolute(v + m, root, size);
    d->slot[k] = detail::peer_slot(s, child);
    if (d->slot[k] < 0) return false;
    detail::receive_envelope(s, d->slot[k], detail::TagLayout::collective, seq, &d->lane[k],
                             &d->tag[k]);
    d->child[k] = child;
    d->from[k] = s.to_root(child);
    const int blocks = subtree_span(v + m, size);
    d->first[k] = v == 0 ? std::min(blocks, size - child) : blocks;  // before the wrap
    d->second[k] = blocks - d->first[k];
  }
  if (v == 0) return true;
  const int parent = absolute(v - low, root, size);
  MPI_Comm lane = MPI_COMM_NULL;  // s.send_lane
  if (!detail::fast_send_envelope(s, parent, detail::TagLayout::collective, seq, &lane, &d->up_tag))
    return false;
  d->to = s.to_root(parent);
  d->head = parent == root ? std::min(d->span, size - s.rank) : d->span;
  return true;
}

// The direct gather when it can go (*rc its result, not yet raised, and true), keeping its
// envelopes when every type it uses is predefined; otherwise nothing done and false, and the
// caller runs the general plan. `t` holds the facts of the type this process's blocks are
// counted in: recvtype at the root, sendtype elsewhere. Inlined into its one caller, whose
// checks and choice it continues.
[[gnu::always_inline]] inline bool direct_tree_gather(
    detail::RangeState& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    int recvcount, MPI_Datatype recvtype, const detail::TypeFacts& t, int root, int* rc) {
  if (!detail::direct_tree_ready(s)) return false;
  const bool is_root = s.rank == root, in_place = sendbuf == MPI_IN_PLACE;
  const int v = detail::relative(s.rank, root, s.size);
  if (!is_root && std::min(lowest_bit(v, s.size), s.size - v) > 1 &&
      !(t.predefined && t.contiguous()))
    return false;  // its subtree's blocks are not bytes to copy side by side
  const bool keep =
      t.predefined && (!is_root || in_place || detail::type_facts(sendtype).predefined);
  DirectGather fresh;
  DirectGather& d = keep ? g_direct_gather : fresh;
  if (keep) detail::forget(detail::kRememberedGather);
  if (!direct_gather_envelopes(s, root, &d)) return false;
  d.root = root, d.in_place = in_place;
  d.sendcount = sendcount, d.sendtype = sendtype, d.recvcount = recvcount, d.recvtype = recvtype;
  d.t = t;
  d.own_bytes =
      is_root && !in_place && sendtype == recvtype && sendcount <= recvcount && t.contiguous()
          ? static_cast<long long>(sendcount) * t.size
          : -1;
  if (keep) detail::remember(detail::kRememberedGather, s, &d.generation);
  *rc = direct_gather(s, d, sendbuf, recvbuf);
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
  detail::RangeState* s = detail::CommAccess::of(comm);
  if (repeats_direct_gather(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root))
    return detail::runner_result(comm, direct_gather(*s, g_direct_gather, sendbuf, recvbuf));
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
