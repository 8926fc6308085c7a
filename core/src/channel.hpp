// A channel: this process's private duplicates ("lanes") of one root MPI communicator, the
// registry of live ranges on it, and messages taken out of MPI's matching but not yet received.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tag_layout.hpp"

namespace rangecomm::detail {

struct RangeState;

// A message removed from MPI's queue by MPI_Improbe that no posted receive wanted yet.
struct Parked {
  std::uint32_t ctx;
  TagLayout::Kind kind;
  int payload;     // user tag or collective sequence number
  int root_source; // sender's rank on the root communicator
  MPI_Message message;
  MPI_Status status;
};

struct Lane {
  MPI_Comm comm = MPI_COMM_NULL;
  int engine_recvs = 0;       // receives waiting in the matching engine for this lane
  std::list<Parked> parked;   // in arrival order
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
  Lane& lane(int i) { return lanes_[i]; }
  int lane_count() const { return static_cast<int>(lanes_.size()); }

  // Registry of live ranges with two or more members, by context. A range whose context
  // equals that of a live range sharing another member with it cannot be told apart on the
  // wire; register() refuses it and names the other range in *clash.
  bool register_range(RangeState* range, const RangeState** clash);
  void unregister_range(RangeState* range);
  // Whether range (not registered) could be registered now without a clash.
  bool context_free_for(const RangeState& range) const;
  // The live range with context ctx that has root rank `root_source` as a member.
  RangeState* find_range(std::uint32_t ctx, int root_source) const;

 private:
  Channel() = default;
  MPI_Comm user_ = MPI_COMM_NULL;
  int root_rank_ = 0, root_size_ = 0;
  bool one_node_ = false;
  TagLayout layout_;
  std::vector<Lane> lanes_;
  std::unordered_map<std::uint32_t, std::vector<RangeState*>> live_;
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
