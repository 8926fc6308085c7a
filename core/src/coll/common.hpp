// What every collective shares: argument checks and running a schedule blocking or not.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>
#include <vector>

#include "coll/tuning.hpp"
#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"
#include "sched/schedule.hpp"
#include "util/errors.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

// The errors the checks below raise (out of line: the checks run on every call).
int bad_comm(const RangeState* s, const char* fn);
int bad_root(const RangeState& s, int root, const char* fn);
int bad_buffer(const RangeState& s, int count, const char* fn);
int bad_op(const RangeState& s, const char* fn);
int bad_in_place(const RangeState& s, bool is_root, const char* root_buf_name, const char* fn);

// Checks the communicator; *out is its state on success.
inline int check_comm(const Comm& comm, const char* fn, RangeState** out) {
  RangeState* s = detail::CommAccess::of(comm);
  if (s == nullptr || s->channel->closed()) return bad_comm(s, fn);
  *out = s;
  return MPI_SUCCESS;
}
inline int check_root(const RangeState& s, int root, const char* fn) {
  return root >= 0 && root < s.size ? MPI_SUCCESS : bad_root(s, root, fn);
}
inline int check_buffer(const RangeState& s, int count, MPI_Datatype type, const char* fn) {
  return count >= 0 && type != MPI_DATATYPE_NULL ? MPI_SUCCESS : bad_buffer(s, count, fn);
}
inline int check_op(const RangeState& s, MPI_Op op, const char* fn) {
  return op != MPI_OP_NULL ? MPI_SUCCESS : bad_op(s, fn);
}
// The checks of a rooted gather or scatter that every member makes: the communicator, the root,
// and the member's own block (sendbuf of a gather, recvbuf of a scatter), which only the root
// may give as MPI_IN_PLACE; the root's buffer for all blocks (named root_buf_name) never may.
inline int check_rooted(const Comm& comm, const void* own_buf, int own_count, MPI_Datatype own_type,
                        const void* root_buf, const char* root_buf_name, int root, const char* fn,
                        RangeState** s) {
  int rc = check_comm(comm, fn, s);
  if (rc == MPI_SUCCESS) rc = check_root(**s, root, fn);
  if (rc != MPI_SUCCESS) return rc;
  const bool is_root = (*s)->rank == root;
  if (is_root ? root_buf == MPI_IN_PLACE : own_buf == MPI_IN_PLACE)
    return bad_in_place(**s, is_root, root_buf_name, fn);
  return own_buf != MPI_IN_PLACE ? check_buffer(**s, own_count, own_type, fn) : MPI_SUCCESS;
}
// check_comm + check_buffer + check_op.
int check_reduction(const Comm& comm, int count, MPI_Datatype type, MPI_Op op, const char* fn,
                    RangeState** s);

// Runs a collective whose algorithm `build(Plan&)` writes: a blocking one (request null) through
// a Runner when one is available, else as a schedule the engine runs, waited for when blocking.
template <class Build>
int run(const Comm& comm, Request* request, Build&& build);

// The schedule path of run(): starts the schedule; waits for it when request is null.
int run_schedule(const Comm& comm, SchedulePtr schedule, Request* request);
// The result of a Runner's collective, raised through the range's error handler on failure.
inline int runner_result(const Comm& comm, int rc) {
  return rc == MPI_SUCCESS ? rc
                           : raise_mpi_failure(CommAccess::of(comm)->errcomm(), rc, "collective");
}

template <class Build>
int run(const Comm& comm, Request* request, Build&& build) {
  if (request == nullptr && Runner::available()) {
    Runner runner(*detail::CommAccess::of(comm));
    build(static_cast<Plan&>(runner));
    return runner_result(comm, runner.finish());
  }
  SchedulePtr schedule = new_schedule();
  build(static_cast<Plan&>(*schedule));
  return run_schedule(comm, std::move(schedule), request);
}

// Address of element `index` of a buffer of `type`.
inline char* block_at(void* buf, long long index, MPI_Datatype type) {
  return static_cast<char*>(buf) + index * type_facts(type).extent;
}
inline const char* block_at(const void* buf, long long index, MPI_Datatype type) {
  return block_at(const_cast<void*>(buf), index, type);
}

inline long long bytes_of(int count, MPI_Datatype type) {
  return static_cast<long long>(count) * type_facts(type).size;
}

// What one process sends to, or receives from, one peer.
struct Part {
  void* buf;
  int count;
  MPI_Datatype type;
  bool empty() const { return bytes_of(count, type) == 0; }
};

// The two part lists of an exchange, `size` entries each (contents left to the caller), reused
// between calls so that building an exchange allocates nothing once warm. Valid until the next
// call; the library is entered by one thread at a time.
struct ExchangeParts {
  std::vector<Part> sends, recvs;
};
ExchangeParts& exchange_parts(int size);

// Appends an exchange with every peer: sends[j] to rank j, recvs[j] from rank j, the own part
// copied (sends[rank] to recvs[rank]). All in one round, or with `pairwise` one round per peer
// (round k sending to rank + k and receiving from rank - k). Zero-byte messages are skipped on
// both sides (equal signatures make both sides agree). With `in_place`, sends alias recvs: each
// block leaves through a scratch copy made before anything arrives, and the own block stays
// where it is. Used by the all-to-all family and the direct (one-round) algorithms.
// `sends` is overwritten with the scratch copies when in place.
void add_exchange(Plan& s, std::vector<Part>& sends, const std::vector<Part>& recvs, bool in_place,
                  bool pairwise, int rank, int size);

// The binomial tree on ranks relative to the root: v's parent is v without its lowest set bit;
// its children are v + m for powers of two m below that bit; v's subtree is v .. v + span - 1.
inline int lowest_bit(int v, int size) { return v == 0 ? size : (v & -v); }
inline int subtree_span(int v, int size) { return std::min(lowest_bit(v, size), size - v); }

// Rank arithmetic relative to a root (rank and root in 0 .. size - 1, rel in -size .. size - 1),
// by a compare instead of a division: a small collective computes several per call.
inline int relative(int rank, int root, int size) {
  const int d = rank - root;
  return d < 0 ? d + size : d;
}
inline int absolute(int rel, int root, int size) {
  const int a = rel + root;
  return a >= size ? a - size : a < 0 ? a + size : a;
}

// Collectives of at most this many bytes in all may go straight through MPI's blocking calls
// without a plan (direct_tree_bcast, direct_tree_gather): messages both MPIs send eagerly.
constexpr long long kDirectTreeBytes = 256;
// Whether a blocking collective on s may go that way now: a Runner would be available, and no
// message has been taken out of MPI on its channel (a parked one may be the collective's).
inline bool direct_tree_ready(const RangeState& s) {
  return Runner::available() && s.channel->parked().empty();
}

// The collectives that keep the envelopes of their last direct tree for the same call again
// (a program's loop): their entries of g_remembered_states. The kept envelopes hold while that
// state lives, the thresholds are those of the same tuning generation, the peers that send to
// this process still send under the slots they had, and nothing is parked; the bindings this
// process sent stay. Kept only for predefined types, whose handles are never reused.
enum RememberingCollective { kRememberedBcast = 0, kRememberedGather = 1 };
static_assert(kRememberedGather < kRememberingCollectives);
// Drops what `who` keeps, before its envelopes are overwritten.
inline void forget(RememberingCollective who) { g_remembered_states[who] = nullptr; }
// Keeps `who`'s envelopes, just made complete on s, for the same call again under the current
// tuning generation (stored in *generation).
inline void remember(RememberingCollective who, const RangeState& s, unsigned* generation) {
  *generation = g_tuning_generation;
  g_remembered_states[who] = &s;
}
// Whether s is the state `who` keeps envelopes for, they are of the current tuning generation
// `generation`, and a direct tree could run on s now.
inline bool remembered_and_ready(const RangeState* s, RememberingCollective who,
                                 unsigned generation) {
  return s != nullptr && s == g_remembered_states[who] && generation == g_tuning_generation &&
         !s->channel->closed() && direct_tree_ready(*s);
}

// The binomial tree of a broadcast from `root`, seen from `rank` (ranks of the range): its
// parent (-1 at the root) and its children, farthest first (the order add_bcast sends in).
struct TreeLinks {
  int parent = -1;
  int children = 0;
  int child[kMaxRelayTargets];
};
inline TreeLinks binomial_links(int rank, int root, int size) {
  TreeLinks links;
  const int v = relative(rank, root, size);
  long long top = 1;  // v's lowest bit; for the root the power of two that covers the range
  if (v != 0)
    top = v & -v;
  else
    while (top < size) top <<= 1;
  if (v != 0) links.parent = absolute(v - static_cast<int>(top), root, size);
  for (long long m = top >> 1; m > 0; m >>= 1)
    if (v + m < size) links.child[links.children++] = absolute(v + static_cast<int>(m), root, size);
  return links;
}

// The same broadcast, blocking (request null) or not, as a relay on this process (start_relay):
// the receive from the parent posted at once, the sends to the children when it is in, on
// MPI's own requests. Returns false, doing nothing, when start_relay cannot take it; otherwise
// the call's result (raised on failure) is in *rc.
bool relay_bcast(const Comm& comm, void* buf, int count, MPI_Datatype type, int root,
                 Request* request, int* rc);

// Appends a binomial-tree broadcast of buf from root; with piece_count > 0 every tree edge
// carries the message in pieces of piece_count elements.
void add_bcast(Plan& s, void* buf, int count, MPI_Datatype type, int root, int rank, int size,
               int piece_count = 0);
// A buffer of count elements cut into `parts` blocks whose sizes differ by at most one.
class Blocks {
 public:
  Blocks(void* buf, int count, MPI_Datatype type, int parts)
      : buf_(static_cast<char*>(buf)),
        count_(count),
        parts_(parts),
        extent_(type_facts(type).extent) {}
  long long first(int b) const { return static_cast<long long>(count_) * b / parts_; }
  int length(int b) const { return static_cast<int>(first(b + 1) - first(b)); }
  char* at(int b) const { return buf_ + first(b) * extent_; }
  int largest() const { return length(parts_ - 1); }

 private:
  char* buf_;
  int count_, parts_;
  MPI_Aint extent_;
};

// Blocks over the caller's send buffer, for schedule steps that only send from it and fold it
// in (never written).
inline Blocks source_blocks(const void* sendbuf, int count, MPI_Datatype type, int parts) {
  return Blocks(const_cast<void*>(sendbuf), count, type, parts);
}

// Appends a ring reduce-scatter over the blocks of buf (a commutative op): p - 1 steps, after
// which block (rank + 1) % size of buf holds the full reduction of that block. With `source`
// (the caller's vector in the same layout, not overlapping buf), buf need not start as a copy
// of it: its own block (rank) is then never written.
void add_ring_reduce_scatter(Plan& s, const Blocks& blocks, MPI_Datatype type, MPI_Op op, int rank,
                             int size, const Blocks* source = nullptr);

// Recursive halving and doubling on any number of processes: the ranks beyond the largest
// power of two pof2 fold in first (of the first 2 * rem ranks, each even one hands its vector to
// the odd one above it and sits out); the pof2 that go on are numbered 0 .. pof2 - 1.
struct Fold {
  int pof2 = 1, rem = 0;
  explicit Fold(int size) {
    while (pof2 * 2 <= size) pof2 *= 2;
    rem = size - pof2;
  }
  // The rank among the pof2, or -1 for a rank that sits out.
  int newrank(int rank) const {
    if (rank >= 2 * rem) return rank - rem;
    return rank % 2 == 0 ? -1 : rank / 2;
  }
  // The range rank of a rank among the pof2.
  int real(int newrank) const { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }
  // Whether nobody folds in (the size is a power of two).
  bool none() const { return rem == 0; }

  // Appends the fold-in: a sitting-out rank sends buf to rank + 1 (and, with result_back,
  // receives the result from rank + 1 into buf at the end: fold_out's send in an allreduce, the
  // final send of a reduce whose root sat out); its partner reduces it into buf through tmp
  // (count elements). Returns newrank(rank).
  int fold_in(Plan& s, void* buf, void* tmp, int count, MPI_Datatype type, MPI_Op op, int rank,
              bool result_back) const;
  // Appends the result's way back to the ranks that sat out.
  void fold_out(Plan& s, const void* buf, int count, MPI_Datatype type, int rank) const;
};

// The block spans a nearest-first halving went through: before[k] is what the process held
// before step k (the partner at distance 2^k), kept what it holds at the end.
struct HalvingSpans {
  int steps = 0;
  std::pair<int, int> before[31];
  std::pair<int, int> kept;
};

// Appends Rabenseifner's reduce-scatter by recursive halving over `mine` (pof2 blocks of a
// commutative op's vector; `theirs` the same layout over scratch). Without `spans` the partners
// are farthest first, and afterwards process newrank holds block newrank fully reduced. With
// `spans` they are nearest first, as MPICH's allreduce pairs them, so that every element is
// combined in recursive doubling's association (floating-point sums then have MPI's bits); the
// blocks held are recorded there (the last is not block newrank). With `source` (the caller's
// vector in the same layout, not overlapping mine) the first step sends from and folds in
// source, so mine need not start as a copy of it: the whole-vector copy is saved and only the
// blocks kept are written in mine.
void add_halving_reduce_scatter(Plan& s, const Blocks& mine, const Blocks& theirs,
                                MPI_Datatype type, MPI_Op op, int newrank, const Fold& fold,
                                const Blocks* source = nullptr, HalvingSpans* spans = nullptr);

// Elements in blocks [lo, hi).
inline int span_length(const Blocks& b, int lo, int hi) {
  return static_cast<int>(b.first(hi) - b.first(lo));
}

// Appends a pipelined chain broadcast in segments of segment_count elements.
void add_chain_bcast(Plan& s, void* buf, int count, MPI_Datatype type, int root, int rank, int size,
                     int segment_count);
// Appends a scatter + allgather broadcast of the n bytes at raw (bcast.cpp says how).
void add_scatter_allgather_bcast(Plan& s, void* raw, int n, int root, int rank, int size);
// Appends a binomial-tree reduction to root (rank order kept for non-commutative ops); on the
// root the result lands in recvbuf. sendbuf may equal recvbuf on the root (in place).
void add_reduce(Plan& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                MPI_Op op, int root, int rank, int size);

// Gather and Scatter: a binomial tree, which packs a subtree's blocks into one message (so their
// `total` bytes must fit an int), below `short_bytes`, else linear.
enum class RootedAlgorithm { binomial, linear };
constexpr const char* kRootedNames[] = {"binomial", "linear"};
inline RootedAlgorithm choose_rooted(Forced& forced, long long total, long long short_bytes) {
  const bool tree_fits = total <= INT_MAX;
  RootedAlgorithm chosen =
      total < short_bytes && tree_fits ? RootedAlgorithm::binomial : RootedAlgorithm::linear;
  auto fits = [&](RootedAlgorithm a) { return a == RootedAlgorithm::linear || tree_fits; };
  return select(forced, fits, chosen);
}

}  // namespace rangecomm::detail
