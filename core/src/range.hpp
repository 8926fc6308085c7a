// The state behind a rangecomm::Comm: a strided range of a root communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "channel.hpp"
#include "rangecomm/comm.hpp"

namespace rangecomm::detail {

struct MatchState;

struct RangeState {
  std::shared_ptr<Channel> channel;
  // Members are root ranks first + i * stride for i in 0..size-1.
  int first = 0, stride = 1, size = 0;
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

  int last() const { return first + (size - 1) * stride; }
  int to_root(int r) const { return first + r * stride; }
  // Rank of a root rank in this range, or MPI_UNDEFINED.
  int from_root(int root_rank) const {
    int d = root_rank - first;
    if (d < 0 || d % stride != 0 || d / stride >= size) return MPI_UNDEFINED;
    return d / stride;
  }
  MPI_Comm lane_comm() const { return channel->lane(lane).comm; }
  MPI_Comm errcomm() const { return channel->user(); }
  MatchState& matching();
};

// Number of members two ranges have in common, counting at most two: 0, 1 or 2 (= "2 or more").
int common_members_upto2(const RangeState& a, const RangeState& b);

struct CommAccess {
  static Comm make(std::shared_ptr<RangeState> s) { return Comm(std::move(s)); }
  static const std::shared_ptr<RangeState>& state(const Comm& c) { return c.state_; }
};

}  // namespace rangecomm::detail
