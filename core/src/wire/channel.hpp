// A channel: this process's private copies ("lanes") of one root MPI communicator, the slots
// this process sends under and the bindings its peers sent, and messages taken out of MPI's
// matching but not yet received.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wire/comm_id.hpp"
#include "wire/tag_layout.hpp"

namespace rangecomm::detail {

struct RangeState;

// A message removed from MPI's queue by MPI_Improbe that no posted receive wanted yet. A
// collective message that came inside its sender's binding (TagLayout::bind_with_data) is no
// longer in MPI: message is MPI_MESSAGE_NULL and `packed` holds the binding's bytes, the data
// packed from `offset` on, `bytes` its type signature's size.
struct Parked {
  CommId comm;  // the communicator it was sent on
  TagLayout::Kind kind;
  int payload;      // user tag or collective sequence number
  int root_source;  // sender's rank on the root communicator
  MPI_Message message;
  MPI_Status status;
  std::vector<char> packed;
  int offset = 0;
  MPI_Count bytes = 0;
};

// What a binding with data carries before the packed data (TagLayout::bind_with_data).
struct BoundDataHeader {
  std::uint64_t hi = 0, lo = 0;  // the communicator's identity
  std::int32_t slot = 0;
  std::int32_t payload = 0;  // the collective sequence number
  std::int64_t bytes = 0;    // the size of the data's type signature
};

struct Lane {
  MPI_Comm comm = MPI_COMM_NULL;
  int engine_waits = 0;  // receives waiting for the engine to take messages off this lane
};

// What a control message carries: a binding (a = slot) or a message header (a = kind,
// b = payload), with the identity of the communicator.
struct ControlMessage {
  std::uint64_t hi = 0, lo = 0;
  std::int32_t a = 0, b = 0;
};

class ChannelRef;

class Channel {
 public:
  // Collective over `user`: makes the lanes. Returns MPI_SUCCESS or an error code.
  static int open(MPI_Comm user, ChannelRef* out);
  ~Channel();

  // Frees the lanes (when `user` is freed, or at MPI_Finalize). Ranges still alive on a
  // closed channel fail their operations with MPI_ERR_COMM.
  void close();
  bool closed() const { return lanes_.empty(); }

  MPI_Comm user() const { return user_; }
  int root_rank() const { return root_rank_; }
  int root_size() const { return root_size_; }
  // Whether every process of `user` shares one node's memory (MPI_COMM_TYPE_SHARED), so that
  // many receivers can read one sender's buffer at once (the flat broadcast).
  bool one_node() const { return one_node_; }
  const TagLayout& layout() const { return layout_; }
  // MPI_TAG_UB: the program's tags go up to it on every range of the channel, as on any MPI
  // communicator. Tags above TagLayout::max_payload travel with a header (prepare_send).
  int user_tag_ub() const { return user_tag_ub_; }
  Lane& lane(int i) { return lanes_[i]; }
  int lane_count() const { return static_cast<int>(lanes_.size()); }

  // Slots this process sends under, on `lane` (their low bits): -1 when every one is taken.
  int acquire_slot(int lane);
  void release_slot(int slot);

  // Bindings peers sent: root rank `source` sends communicator `id` under `slot`. Returns true
  // when the slot named another communicator before, *replaced (the peer freed that one and
  // reuses the slot: everything it sent under the old binding came before this message).
  bool bind(int source, int slot, const CommId& id, CommId* replaced);
  const CommId* bound_comm(int source, int slot) const;
  int bound_slot(int source, const CommId& id) const;  // -1 when unknown
  // Headers of messages `source` sent on `lane` without a slot, whose data has not been taken
  // yet.
  std::deque<ControlMessage>& wide_headers(int source, int lane) {
    return wide_headers_[static_cast<std::int64_t>(source) * 16 + lane];
  }

  // Communicators of this process by identity (those that have had traffic).
  void enroll(const CommId& id, RangeState* range);
  void withdraw(const CommId& id, const RangeState* range);
  RangeState* find(const CommId& id) const;

  // Messages taken out of MPI that no receive wanted yet, in arrival order.
  std::list<Parked>& parked() { return parked_; }
  // Creation counts of the root's children (see RangeState::child_counts).
  ChildCounts& root_children() {
    if (!root_children_) root_children_ = std::make_unique<ChildCounts>();
    return *root_children_;
  }

 private:
  Channel() = default;
  MPI_Comm user_ = MPI_COMM_NULL;
  int root_rank_ = 0, root_size_ = 0;
  bool one_node_ = false;
  TagLayout layout_;
  int user_tag_ub_ = TagLayout::max_payload;
  std::vector<Lane> lanes_;
  // Per lane: the tag bits below next_high_ were handed out at least once; released slots are
  // reused first.
  std::vector<int> next_high_;
  std::vector<std::vector<int>> free_slots_;
  std::unordered_map<std::uint64_t, CommId> by_slot_;  // (source, slot) -> communicator
  struct SourceComm {
    int source;
    CommId id;
    bool operator==(const SourceComm& o) const { return source == o.source && id == o.id; }
  };
  struct SourceCommHash {
    std::size_t operator()(const SourceComm& k) const {
      return static_cast<std::size_t>(k.id.lo ^ (static_cast<std::uint64_t>(k.source) << 40));
    }
  };
  std::unordered_map<SourceComm, int, SourceCommHash> by_comm_;  // (source, comm) -> slot
  std::unordered_map<std::int64_t, std::deque<ControlMessage>> wide_headers_;
  IdTable<RangeState> enrolled_;
  std::list<Parked> parked_;
  std::unique_ptr<ChildCounts> root_children_;
  int refs_ = 0;  // ChannelRefs to this channel
  friend class ChannelRef;
};

// A counted reference to a channel; the last one deletes it. The count is not atomic: calls
// into core are serialised (under MPI_THREAD_MULTIPLE the shim's library lock), and every range
// state holds a reference, so an atomic count would put two locked instructions into each O(1)
// creation and destruction of a range (about a sixth of their time).
class ChannelRef {
 public:
  ChannelRef() = default;
  explicit ChannelRef(Channel* c) : p_(c) {
    if (p_ != nullptr) ++p_->refs_;
  }
  ChannelRef(const ChannelRef& other) : ChannelRef(other.p_) {}
  ChannelRef(ChannelRef&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  ChannelRef& operator=(ChannelRef other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~ChannelRef() {
    if (p_ != nullptr && --p_->refs_ == 0) delete p_;
  }
  Channel* operator->() const { return p_; }
  Channel& operator*() const { return *p_; }
  bool operator==(const ChannelRef& other) const { return p_ == other.p_; }

 private:
  Channel* p_ = nullptr;
};

// Every open channel of the process, for progress and for shutdown.
std::vector<Channel*>& open_channels();

}  // namespace rangecomm::detail
