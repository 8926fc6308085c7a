// The state behind a rangecomm::Comm: a strided range of a root communicator.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "channel.hpp"
#include "rangecomm/comm.hpp"

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
  ChannelRef channel;
  // Members are root ranks first + i * stride for i in 0..size-1, or table->roots[i] when
  // there is a table (then first is the first member and stride 0).
  int first = 0, stride = 1, size = 0;
  std::shared_ptr<const GroupTable> table;
  std::shared_ptr<const GroupTable> parent_table;  // the parent's, when the parent has one
  int rank = MPI_UNDEFINED;  // this process's rank in the range
  int parent_first = 0, parent_stride = 1;
  int depth = 0;
  std::uint32_t ctx = 0;
  int lane = 0;
  int tag_base = 0;            // context bits of the tag, see TagLayout
  std::uint32_t coll_seq = 0;  // sequence number of the next collective
  bool registered = false;
  std::unique_ptr<MatchState> match;  // made on first use of the matching engine

  RangeState();
  ~RangeState();
  RangeState(const RangeState&) = delete;
  RangeState& operator=(const RangeState&) = delete;

  int last() const { return table ? table->roots.back() : first + (size - 1) * stride; }
  int to_root(int r) const { return table ? table->roots[r] : first + r * stride; }
  // Rank of a root rank in this range, or MPI_UNDEFINED.
  int from_root(int root_rank) const {
    if (table) return table->find(root_rank);
    int d = root_rank - first;
    if (d < 0 || d % stride != 0 || d / stride >= size) return MPI_UNDEFINED;
    return d / stride;
  }
  MPI_Comm lane_comm() const { return channel->lane(lane).comm; }
  MPI_Comm errcomm() const { return channel->user(); }
  MatchState& matching();
};

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
    if (n == 1 && g_recycle_range_states && stack().count > 0)
      return static_cast<T*>(stack().blocks[--stack().count]);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1 && g_recycle_range_states && stack().count < Stack::kCapacity) {
      stack().blocks[stack().count++] = p;
      return;
    }
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept { return true; }

 private:
  struct Stack {
    static constexpr std::size_t kCapacity = 64;
    void* blocks[kCapacity];
    std::size_t count;
  };
  static Stack& stack() {
    static Stack* s = new Stack{};  // never destroyed (see above)
    return *s;
  }
};

// A new, empty range state.
inline std::shared_ptr<RangeState> new_range_state() {
  return std::allocate_shared<RangeState>(RecyclingAllocator<RangeState>{});
}

// Number of members two ranges have in common, counting at most two: 0, 1 or 2 (= "2 or more").
int common_members_upto2(const RangeState& a, const RangeState& b);

// Registers s in its channel's clash table (ranges of two or more members). On a clash with a
// live communicator returns false and describes that one in *clash.
bool try_register_range(RangeState& s, std::string* clash);
// The same, raising MPI_ERR_COMM on errcomm for a clash.
int register_range(RangeState& s, MPI_Comm errcomm);
// Context, lane and tag base of s from its depth and members.
void set_context(RangeState& s);
// Members from root ranks in rank order: strided fields when evenly spaced, else a table.
void set_members(RangeState& s, std::vector<int> roots);
// Channel and parent coordinates of a communicator made from parent.
void set_parent(RangeState& s, const RangeState& parent);

struct CommAccess {
  static Comm make(std::shared_ptr<RangeState> s) { return Comm(std::move(s)); }
  static const std::shared_ptr<RangeState>& state(const Comm& c) { return c.state_; }
};

}  // namespace rangecomm::detail
