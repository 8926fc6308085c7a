// The state behind a rangecomm::Comm: a strided range of a root communicator.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "comm/peer_table.hpp"
#include "rangecomm/comm.hpp"
#include "util/block_stack.hpp"
#include "wire/channel.hpp"

namespace rangecomm::detail {

struct MatchState;

// The members of a communicator that is not a strided range of its root (a general group from
// Icomm_create_group, or a range of one): root ranks in rank order, and the same pairs sorted by
// root rank for the reverse lookup.
struct GroupTable {
  std::vector<int> roots;
  std::vector<std::pair<int, int>> by_root;  // (root rank, rank), sorted

  explicit GroupTable(std::vector<int> members);
  int find(int root_rank) const;  // rank of root_rank, or MPI_UNDEFINED
};

struct RangeState {
  static constexpr int kNoSlot = -1;  // no message sent yet
  static constexpr int kWide = -2;    // every slot was taken: messages carry their identity

  ChannelRef channel;
  // Members are root ranks first + i * stride for i in 0..size-1, or table->roots[i] when
  // there is a table (then first is the first member and stride 0).
  int first = 0, stride = 1, size = 0;
  std::uint32_t coll_seq = 0;  // sequence number of the next collective
  std::shared_ptr<const GroupTable> table;
  std::shared_ptr<const GroupTable> parent_table;  // the parent's, when the parent has one
  int rank = MPI_UNDEFINED;                        // this process's rank in the range
  int parent_first = 0, parent_stride = 1;
  int depth = 0;
  CommId id;
  int slot = kNoSlot;     // this process's slot for the communicator, taken at first send
  int send_tag_base = 0;  // TagLayout::tag_base(slot)
  MPI_Comm send_lane = MPI_COMM_NULL;
  // Made on first traffic (entries for the peers it reaches), and on first use of the matching
  // engine; with either, the communicator is in its channel's table of communicators by
  // identity.
  PeerTable peers;
  std::unique_ptr<MatchState> match;
  std::unique_ptr<ChildCounts> children;  // made at the first creation from this one

  RangeState();
  ~RangeState();
  RangeState(const RangeState&) = delete;
  RangeState& operator=(const RangeState&) = delete;

  // Whether nothing outside this state knows it: no peers, matching state or slot (it never
  // carried traffic).
  bool untouched() const { return !peers.made() && !match && slot == kNoSlot; }
  // Makes a state that carried traffic untouched again, as its destruction would leave the rest
  // of the library: out of its channel's table of communicators, its slot released, its
  // matching state (and any message parked there) gone; the peer table's memory is kept for
  // the next communicator built in it.
  void retire();
  // Back to a new state's values, keeping the memory and the channel (an untouched state
  // only; a state its handle alone holds is retired first and then renewed: another
  // communicator in place). A member added above must be reset here too.
  void renew() {
    forget_remembered();
    first = 0, stride = 1, size = 0;
    coll_seq = 0;
    if (table) table.reset();
    if (parent_table) parent_table.reset();
    rank = MPI_UNDEFINED;
    parent_first = 0, parent_stride = 1;
    depth = 0;
    id = CommId{};
    send_tag_base = 0;
    send_lane = MPI_COMM_NULL;
    if (children) children.reset();
  }

  int last() const { return table ? table->roots.back() : first + (size - 1) * stride; }
  int to_root(int r) const { return table ? table->roots[r] : first + r * stride; }
  // Rank of a root rank in this range, or MPI_UNDEFINED.
  int from_root(int root_rank) const {
    if (table) return table->find(root_rank);
    int d = root_rank - first;
    if (d < 0 || d % stride != 0 || d / stride >= size) return MPI_UNDEFINED;
    return d / stride;
  }
  MPI_Comm errcomm() const { return channel->user(); }
  MatchState& matching();
  PeerLink& peer(int r) {
    if (!peers.made()) make_peers();
    return peers.at(r);
  }
  // The creation counts of children made from this communicator (the root's live in its
  // channel, so that a root made again after all handles were freed continues them).
  ChildCounts& child_counts() {
    if (depth == 0 && !table) return channel->root_children();
    if (!children) children = std::make_unique<ChildCounts>();
    return *children;
  }

 private:
  void make_peers();
  // Out of g_remembered_states (below), where a collective may have kept it.
  void forget_remembered();
};

// The states whose facts the collectives keep from one call to the next (the envelopes of a
// small direct tree: coll/common.hpp), one for each collective that keeps them, forgotten when
// their state is destroyed, so that memory recycled for another state never inherits them. Such
// a state has carried traffic, so it is never renewed in place. Core is entered by one thread at
// a time.
constexpr int kRememberingCollectives = 2;
inline const RangeState* g_remembered_states[kRememberingCollectives] = {};

// The lane every message of s travels on (from every member): chosen by its identity.
inline int comm_lane(const RangeState& s) {
  return static_cast<int>(s.id.lo & static_cast<std::uint64_t>(s.channel->layout().lanes() - 1));
}
// The MPI communicator and tag of a message of `kind` with `payload` from s to its rank `dest`
// (not this process), after sending whatever must precede it: this process's binding when
// it is the first message to dest, or the message's header when s has no slot or the payload
// (a user tag) does not fit TagLayout::max_payload.
int prepare_send(RangeState& s, int dest, TagLayout::Kind kind, int payload, MPI_Comm* comm,
                 int* tag);
// The same for the common case, without a call: s has a slot and dest has its binding (the
// payload must fit TagLayout::max_payload).
inline bool fast_send_envelope(const RangeState& s, int dest, TagLayout::Kind kind, int payload,
                               MPI_Comm* comm, int* tag) {
  if (s.slot < 0) return false;
  const PeerLink* link = s.peers.find(dest);
  if (link == nullptr || !link->bound) return false;
  *comm = s.send_lane;
  *tag = TagLayout::tag(s.send_tag_base, kind, payload);
  return true;
}
// For a collective's first message to dest, instead of prepare_send: sends the
// binding with the message (payload the collective sequence number) packed inside, when it is
// small, and sets *sent; otherwise sends nothing and leaves *sent false.
int send_with_binding(RangeState& s, int dest, int payload, const void* buf, int count,
                      MPI_Datatype type, bool* sent);
// The slot s's rank `r` sends under, or -1 while its binding has not arrived (or it sends
// without a slot).
// Inline while the slot is known (every message after the first from r).
int peer_slot_lookup(RangeState& s, PeerLink& link, int r);
inline int peer_slot(RangeState& s, int r) {
  PeerLink& link = s.peer(r);
  return link.slot >= 0 ? link.slot : peer_slot_lookup(s, link, r);
}
// Whether s's rank r is known to send under `slot` (a peer's slot is forgotten when the peer
// reuses it for another communicator).
inline bool peer_sends_under(const RangeState& s, int r, int slot) {
  const PeerLink* link = s.peers.find(r);
  return link != nullptr && link->slot == slot;
}
// The lane communicator and tag of a message from s's rank r sent under `slot`.
inline void receive_envelope(const RangeState& s, int slot, TagLayout::Kind kind, int payload,
                             MPI_Comm* comm, int* tag) {
  const TagLayout& l = s.channel->layout();
  *comm = s.channel->lane(l.lane_of(slot)).comm;
  *tag = TagLayout::tag(l.tag_base(slot), kind, payload);
}

// Memory for range states, recycled: a program that makes and frees ranges in a loop (the
// point of the library) then calls the allocator for neither. Blocks of one size (the state
// with its shared_ptr control block, allocate_shared rebinds to it) wait in a small stack that
// is never destroyed, so a state freed during static destruction still finds it and leak
// checkers see the blocks as reachable. Like the rest of core, it assumes serialised calls.
// As with the schedule pool, a sanitiser cannot see a use after free of a recycled block.
// Tests that make allocations fail switch the recycling off, so that a creation allocates.
inline bool g_recycle_range_states = true;

template <class T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n == 1 && g_recycle_range_states)
      if (void* kept = stack_.take()) return static_cast<T*>(kept);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1 && g_recycle_range_states && stack_.keep(p)) return;
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static inline BlockStack<64> stack_{};  // one per block size (see above)
};

// A new, empty range state.
inline std::shared_ptr<RangeState> new_range_state() {
  return std::allocate_shared<RangeState>(RecyclingAllocator<RangeState>{});
}

// Members from root ranks in rank order: strided fields when evenly spaced, else a table.
void set_members(RangeState& s, std::vector<int> roots);
// Channel and parent coordinates of a communicator made from parent.
inline void set_parent(RangeState& s, const RangeState& parent) {
  if (!(s.channel == parent.channel)) s.channel = parent.channel;
  s.parent_first = parent.first;
  s.parent_stride = parent.stride;
  s.parent_table = parent.table;
}
// The identity of a communicator made from parent by the creation `digest`.
inline void set_identity(RangeState& s, RangeState& parent, std::uint64_t digest) {
  s.id = derive_id(parent.id, digest, parent.child_counts().next(digest));
}

struct CommAccess {
  static Comm make(std::shared_ptr<RangeState> s) { return Comm(std::move(s)); }
  static const std::shared_ptr<RangeState>& state(const Comm& c) { return c.state_; }
  static std::shared_ptr<RangeState>& state_of(Comm& c) { return c.state_; }
  static RangeState* of(const Comm& c) { return c.state_.get(); }
};

}  // namespace rangecomm::detail
