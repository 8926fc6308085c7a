// Broadcast: a binomial tree for short messages (log p steps), on Open MPI sending messages up
// to 32 KiB in pieces that stay on the transport's fast paths; on Open MPI with every process on
// one node, a flat tree from 64 KiB (every receiver reads the root's buffer at once); across
// nodes, from 12 KiB (a power of two of processes) or 512 KiB (any other number), a scatter and
// an allgather, so every link carries about the message once instead of the tree's log p
// times; for long ones a pipelined chain in segments, so every link carries the message once
// and the root is busy only ~1 message time.
#include <algorithm>
#include <climits>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"
#include "wire/channel.hpp"

namespace rangecomm::detail {

void add_chain_bcast(Plan& s, void* buf, int count, MPI_Datatype type, int root, int rank, int size,
                     int segment_count) {
  MPI_Aint extent = type_facts(type).extent;
  int v = relative(rank, root, size);
  int segments = (count + segment_count - 1) / segment_count;
  auto segment = [&](int k) {
    return static_cast<char*>(buf) + static_cast<MPI_Aint>(k) * segment_count * extent;
  };
  auto length = [&](int k) { return k + 1 < segments ? segment_count : count - k * segment_count; };
  // Round t: receive segment t from the previous process, pass segment t-1 on to the next.
  for (int t = 0; t <= segments; ++t) {
    if (v > 0 && t < segments) s.recv(segment(t), length(t), type, absolute(v - 1, root, size));
    if (v + 1 < size && t > 0)
      s.send(segment(t - 1), length(t - 1), type, absolute(v + 1, root, size));
    s.end_round();
  }
}

// Scatter + allgather (van de Geijn): the n bytes at raw cut into `size` blocks, block j for
// relative rank j. A binomial scatter gives every process its subtree's blocks (relative ranks
// v .. v + span - 1: one stretch of the message, one message per tree edge); an allgather on
// relative ranks then completes the message everywhere: recursive doubling when size is a power
// of two (log p exchanges of growing groups of blocks), else a ring (p - 1 steps of one block).
// A block a process holds already from the scatter (a parent holds its children's) is not sent
// to it: both sides decide that alike from the tree's shape.
void add_scatter_allgather_bcast(Plan& s, void* raw, int n, int root, int rank, int size) {
  const Blocks blocks(raw, n, MPI_PACKED, size);
  auto bytes = [&](int first, int count) {  // of blocks first .. first + count - 1
    return static_cast<int>(blocks.first(first + count) - blocks.first(first));
  };
  auto peer = [&](int rel) { return absolute(rel, root, size); };
  auto scattered = [&](int x, int first, int count) {  // blocks x holds after the scatter
    return first >= x && first + count <= x + subtree_span(x, size);
  };
  const int v = relative(rank, root, size);
  const TreeLinks tree = binomial_links(rank, root, size);
  if (tree.parent >= 0) {
    s.recv(blocks.at(v), bytes(v, subtree_span(v, size)), MPI_PACKED, tree.parent);
    s.end_round();
  }
  for (int i = 0; i < tree.children; ++i) {
    const int child = relative(tree.child[i], root, size);
    s.send(blocks.at(child), bytes(child, subtree_span(child, size)), MPI_PACKED, tree.child[i]);
  }
  s.end_round();
  if ((size & (size - 1)) == 0) {
    for (int mask = 1; mask < size; mask <<= 1) {
      const int partner = v ^ mask, mine = v & ~(mask - 1), theirs = partner & ~(mask - 1);
      if (!scattered(partner, mine, mask))
        s.send(blocks.at(mine), bytes(mine, mask), MPI_PACKED, peer(partner));
      if (!scattered(v, theirs, mask))
        s.recv(blocks.at(theirs), bytes(theirs, mask), MPI_PACKED, peer(partner));
      s.end_round();
    }
    return;
  }
  const int right = (v + 1) % size, left = (v + size - 1) % size;
  for (int k = 0; k < size - 1; ++k) {
    const int out = (v - k + size) % size, in = (v - k - 1 + size) % size;
    if (!scattered(right, out, 1)) s.send(blocks.at(out), bytes(out, 1), MPI_PACKED, peer(right));
    if (!scattered(v, in, 1)) s.recv(blocks.at(in), bytes(in, 1), MPI_PACKED, peer(left));
    s.end_round();
  }
}

}  // namespace rangecomm::detail

namespace rangecomm {

namespace {

// Open MPI's shared-memory transport has three speeds for a message: up to 256 bytes it is
// copied straight into a per-peer fast box, up to 4 KiB (header included) it goes eagerly
// through a queue, and beyond that it waits for the receiver to answer. With 8 ranks on 2 cores
// every step down costs a scheduling delay: a 256-byte broadcast took 7 us, a 384-byte one
// 49 us. So on Open MPI a broadcast of up to 1 KiB travels in pieces of 256 bytes (384 bytes to
// 1 KiB: 0.26-0.53x of native, which sends one message; 1.5 KiB still won on 8 ranks but lost
// on 2, one per core, and from 2 KiB the pieces fill the fast box), and one of up to 32 KiB in
// pieces of 4000 bytes (4-16 KiB: 0.70-0.88x; at 64 KiB pieces no longer win). MPICH's eager
// size is larger and pieces made its 32-64 KiB broadcasts 1.2-1.6x slower on 2 ranks, so they
// are off there.
#if defined(OPEN_MPI)
constexpr long long kBcastSmallPiecedBytes = 1024;
constexpr long long kBcastPiecedBytes = 32768;
#else
constexpr long long kBcastSmallPiecedBytes = 0;
constexpr long long kBcastPiecedBytes = 0;
#endif

// Thresholds (docs/collectives.md).
namespace tune {
detail::Tunable bcast_small_pieced_bytes{"BCAST_SMALL_PIECED_BYTES", kBcastSmallPiecedBytes};
detail::Tunable bcast_small_piece_bytes{"BCAST_SMALL_PIECE_BYTES", 256};
detail::Tunable bcast_pieced_bytes{"BCAST_PIECED_BYTES", kBcastPiecedBytes};
detail::Tunable bcast_piece_bytes{"BCAST_PIECE_BYTES", 4000};
detail::Tunable bcast_pipeline_bytes{"BCAST_PIPELINE_BYTES", 8 << 20};
detail::Tunable bcast_segment_bytes{"BCAST_SEGMENT_BYTES", 1 << 20};
}  // namespace tune

// Bytes per piece for a tree broadcast of `bytes`, or 0 for one message per tree edge.
int bcast_piece_bytes(long long bytes) {
  long long piece = 0;
  if (bytes <= tune::bcast_small_pieced_bytes())
    piece = tune::bcast_small_piece_bytes();
  else if (bytes <= tune::bcast_pieced_bytes())
    piece = tune::bcast_piece_bytes();
  return piece > 0 && piece < bytes ? static_cast<int>(std::min<long long>(piece, INT_MAX)) : 0;
}

// Open MPI moves a large message between processes of one node with one read by the receiver
// from the sender's memory (CMA), so a root can serve every receiver at once and no receiver
// waits for a parent in the tree to be scheduled first: on 8 processes sharing 2 cores a flat
// broadcast of 64 KiB-4 MiB took 0.77-0.96x of the binomial tree's time, level with Open MPI's
// own; on 4 processes the two were alike. Only on one node: across a network the root's link
// would carry the message p - 1 times. Off on other MPIs (not measured beyond 2 processes).
#if defined(OPEN_MPI)
constexpr long long kBcastFlatBytes = 65536;
#else
constexpr long long kBcastFlatBytes = 0;
#endif

namespace tune {
detail::Tunable bcast_flat_bytes{"BCAST_FLAT_BYTES", kBcastFlatBytes};
detail::Tunable bcast_flat_procs{"BCAST_FLAT_PROCS", 16};
}  // namespace tune

// Across nodes a binomial tree sends a long message over log p links one after another, where a
// scatter and an allgather move about the message once per link. MPICH's own switch points
// (12 KiB with a power of two of processes, whose allgather is recursive doubling; 512 KiB
// otherwise, whose allgather is a ring of p - 1 steps), from 8 processes. Never on one node:
// there the tree and its pieces, the flat tree and the chain were measured faster (this
// machine); in SimGrid's simulator with a network like the paper's, 64 Ki ints on 256
// processes took the binomial tree 2.1x the time of SMPI's own broadcast, which does this.
namespace tune {
detail::Tunable bcast_scatter_bytes{"BCAST_SCATTER_BYTES", 12288};
detail::Tunable bcast_scatter_ring_bytes{"BCAST_SCATTER_RING_BYTES", 524288};
detail::Tunable bcast_scatter_procs{"BCAST_SCATTER_PROCS", 8};
}  // namespace tune

bool scatter_bcast(const detail::RangeState& s, long long bytes) {
  if (s.channel->one_node() || s.size < tune::bcast_scatter_procs()) return false;
  const bool power_of_two = (s.size & (s.size - 1)) == 0;
  const long long from =
      power_of_two ? tune::bcast_scatter_bytes() : tune::bcast_scatter_ring_bytes();
  return from > 0 && bytes >= from && bytes <= INT_MAX;
}

bool flat_bcast(const detail::RangeState& s, long long bytes) {
  if (s.size <= 2 || !s.channel->one_node()) return false;  // on 2 the tree is flat already
  long long from = tune::bcast_flat_bytes();
  return from > 0 && bytes >= from && s.size <= tune::bcast_flat_procs();
}

void add_flat_bcast(detail::Plan& plan, void* buf, int count, MPI_Datatype type, int root, int rank,
                    int size) {
  if (rank != root) {
    plan.recv(buf, count, type, root);
    return;
  }
  for (int k = 1; k < size; ++k) plan.send(buf, count, type, (root + k) % size);
}

int bcast_segment_bytes() {
  long long segment = tune::bcast_segment_bytes();
  return static_cast<int>(std::clamp<long long>(segment, 1, INT_MAX));
}

// Pieces and segments must cut every process's message at the same places, but MPI lets each
// process describe the message with its own datatype (only the type signatures must match:
// 1000 MPI_INT at the root, one contiguous type of 1000 ints elsewhere). So they are cut from
// the message's bytes, transferred as MPI_PACKED: the buffer itself on a process whose type
// is a predefined one without padding, a packed copy on any other (packed at the root before
// its sends, unpacked after the receives). This takes packed data to be the bytes of the
// elements, as in MPICH and Open MPI on one kind of machine.
template <class Transfers>
void as_bytes(detail::Plan& s, void* buf, int count, MPI_Datatype type, int bytes, int root,
              int rank, Transfers transfers) {
  // Its own bytes: a predefined type without padding (a derived type's bytes in memory need not
  // be in the order of its type signature, which is the order of the packed bytes).
  detail::TypeFacts t = detail::type_facts(type);
  bool contiguous = t.predefined && t.contiguous();
  void* raw = contiguous ? buf : s.scratch(bytes, MPI_PACKED);
  if (!contiguous && rank == root) s.copy(buf, count, type, raw, bytes, MPI_PACKED);
  transfers(raw);
  // A local step runs before the sends of its round, so children get the packed bytes, and
  // the unpacked message is complete when the broadcast is.
  if (!contiguous && rank != root) s.copy(raw, bytes, MPI_PACKED, buf, count, type);
}

enum class Algorithm { binomial, flat, chain, scatter_allgather };
constexpr const char* kNames[] = {"binomial", "flat", "chain", "scatter_allgather"};
detail::Forced forced{"BCAST", kNames};

// The algorithm for a broadcast of `bytes`, and the bytes its cuts are made at: a binomial
// tree's pieces (0: one message per tree edge), a chain's segments. The chain and the scatter
// cut the message's bytes, so they need them to fit an int; the others take any message.
struct Choice {
  Algorithm algorithm;
  int cut_bytes;
};
Choice choose_anew(const detail::RangeState& s, long long bytes) {
  const bool tree = bytes < tune::bcast_pipeline_bytes() || s.size == 2;
  const int piece = bcast_piece_bytes(bytes);
  Algorithm chosen = Algorithm::chain;
  if (tree && scatter_bcast(s, bytes))
    chosen = Algorithm::scatter_allgather;
  else if (tree)
    chosen = piece == 0 && flat_bcast(s, bytes) ? Algorithm::flat : Algorithm::binomial;
  else if (bytes > INT_MAX)
    chosen = Algorithm::binomial;
  auto fits = [&](Algorithm a) {
    return (a != Algorithm::chain && a != Algorithm::scatter_allgather) || bytes <= INT_MAX;
  };
  Algorithm a = detail::select(forced, fits, chosen);
  int cut = a == Algorithm::binomial ? piece : a == Algorithm::chain ? bcast_segment_bytes() : 0;
  return {a, cut};
}

// The choice depends on the message's bytes, the range's size and whether it lies on one node,
// and the thresholds; a program broadcasts the same way in a loop, so the last choice is kept
// for the next call with the same of all of these (thresholds unchanged since: same tuning
// generation), which then costs a few comparisons instead of the rules.
Choice choose(const detail::RangeState& s, long long bytes) {
  struct Last {
    unsigned generation;
    long long bytes;
    int size;
    bool one_node;
    Choice choice;
  };
  static Last last{0, 0, 0, false, {Algorithm::binomial, 0}};  // generation 0: never current
  const bool one_node = s.channel->one_node();
  if (last.generation != detail::g_tuning_generation || last.bytes != bytes ||
      last.size != s.size || last.one_node != one_node)
    last = {detail::g_tuning_generation, bytes, s.size, one_node, choose_anew(s, bytes)};
  return last.choice;
}

// A broadcast by a plan (out of line: the small broadcasts that go without one, below, then
// keep their own call lean).
[[gnu::noinline]] int planned_bcast(void* buf, int count, MPI_Datatype type, int root,
                                    const Comm& comm, Request* request, long long bytes,
                                    Choice choice) {
  const detail::RangeState* s = detail::CommAccess::of(comm);
  const bool one_message = choice.algorithm == Algorithm::binomial && choice.cut_bytes == 0;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (choice.algorithm == Algorithm::flat) {
      add_flat_bcast(plan, buf, count, type, root, s->rank, s->size);
      return;
    }
    if (one_message || (choice.algorithm == Algorithm::binomial && bytes > INT_MAX)) {
      detail::add_bcast(plan, buf, count, type, root, s->rank, s->size);
      return;
    }
    as_bytes(plan, buf, count, type, static_cast<int>(bytes), root, s->rank, [&](void* raw) {
      int n = static_cast<int>(bytes);
      if (choice.algorithm == Algorithm::binomial)
        detail::add_bcast(plan, raw, n, MPI_PACKED, root, s->rank, s->size, choice.cut_bytes);
      else if (choice.algorithm == Algorithm::scatter_allgather)
        detail::add_scatter_allgather_bcast(plan, raw, n, root, s->rank, s->size);
      else
        detail::add_chain_bcast(plan, raw, n, MPI_PACKED, root, s->rank, s->size, choice.cut_bytes);
    });
  });
}

// A blocking binomial-tree broadcast of one message per tree edge, straight through MPI's
// blocking calls without a plan (the fixed cost of a small broadcast is what remains around
// MPI's own). Only when it can go the whole way: a Runner would be available, and the message
// from the parent and those to the children need no binding or header and find no message
// taken out of MPI before them. The sends go one after another, each blocking: a child's receive
// waits for nothing but its parent.
//
// Its envelopes (the parent's and children's ranks in the lanes, the lanes, the tags but for
// the sequence number) are kept for the same call again (common.hpp: RememberingCollective),
// which then skips the argument checks it passed, the algorithm choice and the tree.
struct DirectBcast {
  unsigned generation = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 0, root = 0;
  int parent = -1;             // its rank in the range; -1 at the root
  int parent_slot = 0;         // the slot it sends under
  int from = 0, recv_tag = 0;  // its rank in the lane; the tag but for the sequence number
  MPI_Comm recv_lane = MPI_COMM_NULL;
  int children = 0, send_tag = 0;
  int to[detail::kMaxRelayTargets];  // the children's ranks in the lane, farthest first
};
DirectBcast g_direct_bcast;

// The broadcast through MPI's calls with envelopes d (the tags' sequence number taken here).
int direct_bcast(detail::RangeState& s, const DirectBcast& d, void* buf, int count,
                 MPI_Datatype type) {
  const int seq = detail::next_collective_seq(s);
  int rc = MPI_SUCCESS;
  if (d.parent >= 0)
    rc = MPI_Recv(buf, count, type, d.from, d.recv_tag | seq, d.recv_lane, MPI_STATUS_IGNORE);
  for (int i = 0; rc == MPI_SUCCESS && i < d.children; ++i)
    rc = MPI_Send(buf, count, type, d.to[i], d.send_tag | seq, s.send_lane);
  return rc;
}

// Whether this call repeats the broadcast whose envelopes are kept, on a state they still hold
// for, with a Runner available and nothing parked.
bool repeats_direct_bcast(const detail::RangeState* s, int count, MPI_Datatype type, int root) {
  const DirectBcast& d = g_direct_bcast;
  return detail::remembered_and_ready(s, detail::kRememberedBcast, d.generation) &&
         count == d.count && type == d.type && root == d.root &&
         (d.parent < 0 || detail::peer_sends_under(*s, d.parent, d.parent_slot));
}

// Makes the envelopes of a direct broadcast into *d; false (d unusable) when a message would
// need a binding or a header, or the parent's slot is not yet known.
bool direct_bcast_envelopes(detail::RangeState& s, int root, DirectBcast* d) {
  const detail::TreeLinks links = detail::binomial_links(s.rank, root, s.size);
  const int seq = 0;  // the tags below are made without it (the payload's bits)
  d->parent = links.parent;
  if (links.parent >= 0) {
    d->parent_slot = detail::peer_slot(s, links.parent);
    if (d->parent_slot < 0) return false;
    d->from = s.to_root(links.parent);
    detail::receive_envelope(s, d->parent_slot, detail::TagLayout::collective, seq, &d->recv_lane,
                             &d->recv_tag);
  }
  d->children = links.children;
  MPI_Comm lane = MPI_COMM_NULL;  // s.send_lane
  for (int i = 0; i < links.children; ++i) {
    if (!detail::fast_send_envelope(s, links.child[i], detail::TagLayout::collective, seq, &lane,
                                    &d->send_tag))
      return false;
    d->to[i] = s.to_root(links.child[i]);
  }
  return true;
}

// The direct broadcast when it can go (*rc its result, not yet raised, and true), keeping its
// envelopes for a predefined type; otherwise nothing done and false, and the caller runs the
// general plan.
bool direct_tree_bcast(detail::RangeState& s, void* buf, int count, MPI_Datatype type, int root,
                       bool predefined, int* rc) {
  if (!detail::direct_tree_ready(s)) return false;
  DirectBcast fresh;
  DirectBcast& d = predefined ? g_direct_bcast : fresh;
  if (predefined) detail::forget(detail::kRememberedBcast);
  if (!direct_bcast_envelopes(s, root, &d)) return false;
  if (predefined) {
    d.type = type, d.count = count, d.root = root;
    detail::remember(detail::kRememberedBcast, s, &d.generation);
  }
  *rc = direct_bcast(s, d, buf, count, type);
  return true;
}

int bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm, Request* request,
          const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_comm(comm, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_root(*s, root, fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, count, type, fn);
  if (rc != MPI_SUCCESS) return rc;
  if (count == 0 || s->size == 1) return detail::run(comm, request, [](detail::Plan&) {});
  const detail::TypeFacts facts = detail::type_facts(type);
  const long long bytes = static_cast<long long>(count) * facts.size;
  const Choice choice = choose(*s, bytes);
  if (choice.algorithm == Algorithm::binomial && choice.cut_bytes == 0 &&
      bytes <= detail::kDirectTreeBytes) {
    if (request == nullptr && direct_tree_bcast(*s, buf, count, type, root, facts.predefined, &rc))
      return detail::runner_result(comm, rc);
    if (detail::relay_bcast(comm, buf, count, type, root, request, &rc)) return rc;
  }
  return planned_bcast(buf, count, type, root, comm, request, bytes, choice);
}
}  // namespace

int Bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  detail::RangeState* s = detail::CommAccess::of(comm);
  if (repeats_direct_bcast(s, count, type, root))
    return detail::runner_result(comm, direct_bcast(*s, g_direct_bcast, buf, count, type));
  return bcast(buf, count, type, root, comm, nullptr, "Bcast");
}

int Ibcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ibcast: request is null");
  return bcast(buf, count, type, root, comm, request, "Ibcast");
}

}  // namespace rangecomm
