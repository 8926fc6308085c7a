#include "comm/range.hpp"

#include <algorithm>
#include <climits>
#include <new>

#include "comm/match_state.hpp"
#include "rangecomm/embedding.hpp"
#include "util/errors.hpp"

namespace rangecomm::detail {

RangeState::RangeState() = default;

RangeState::~RangeState() {
  forget_remembered();
  retire();
}

void RangeState::forget_remembered() {
  for (const RangeState*& remembered : g_remembered_states)
    if (remembered == this) remembered = nullptr;
}

void RangeState::retire() {
  if (peers.made() || match) channel->withdraw(id, this);
  if (slot >= 0) channel->release_slot(slot);
  slot = kNoSlot;
  peers.clear();
  match.reset();
}

MatchState& RangeState::matching() {
  if (!match) {
    if (!peers.made()) channel->enroll(id, this);
    match = std::make_unique<MatchState>();
  }
  return *match;
}

void RangeState::make_peers() {
  if (!match) channel->enroll(id, this);
  peers.make(size);
}

GroupTable::GroupTable(std::vector<int> members) : roots(std::move(members)) {
  by_root.reserve(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) by_root.emplace_back(roots[i], static_cast<int>(i));
  std::sort(by_root.begin(), by_root.end());
}

int GroupTable::find(int root_rank) const {
  auto it = std::lower_bound(by_root.begin(), by_root.end(), std::pair{root_rank, INT_MIN});
  return it != by_root.end() && it->first == root_rank ? it->second : MPI_UNDEFINED;
}

void set_members(RangeState& s, std::vector<int> roots) {
  s.size = static_cast<int>(roots.size());
  s.first = roots.front();
  int stride = s.size > 1 ? roots[1] - roots[0] : 1;
  bool strided = stride >= 1;
  for (int i = 2; i < s.size && strided; ++i) strided = roots[i] - roots[i - 1] == stride;
  if (strided) {
    s.stride = stride;
    s.table = nullptr;
  } else {
    s.stride = 0;
    s.table = std::make_shared<const GroupTable>(std::move(roots));
  }
}

}  // namespace rangecomm::detail

namespace rangecomm {

using detail::CommAccess;
using detail::RangeState;

int Comm::rank() const { return state_ ? state_->rank : MPI_UNDEFINED; }
int Comm::size() const { return state_ ? state_->size : 0; }
int Comm::rank_in_root(int r) const {
  return state_ && r >= 0 && r < state_->size ? state_->to_root(r) : MPI_UNDEFINED;
}
int Comm::rank_in_parent(int r) const {
  if (!state_ || r < 0 || r >= state_->size) return MPI_UNDEFINED;
  int root = state_->to_root(r);
  if (state_->parent_table) return state_->parent_table->find(root);
  return (root - state_->parent_first) / state_->parent_stride;
}
int Comm::rank_from_root(int root_rank) const {
  return state_ ? state_->from_root(root_rank) : MPI_UNDEFINED;
}
int Comm::root_first() const { return state_ ? state_->first : MPI_UNDEFINED; }
int Comm::root_stride() const { return state_ && !state_->table ? state_->stride : MPI_UNDEFINED; }
bool Comm::is_strided_range() const { return state_ && !state_->table; }
int Comm::depth() const { return state_ ? state_->depth : MPI_UNDEFINED; }
MPI_Comm Comm::root_mpi_comm() const { return state_ ? state_->channel->user() : MPI_COMM_NULL; }

namespace {
// Makes s (new or renewed) the range first..last:stride of parent (at `levels`): the k-th such
// range is the same communicator at every member, its identity derived from the parent's, the
// coordinates and k.
[[gnu::always_inline]] inline void build_range(RangeState& s, RangeState& parent, int first,
                                               int last, int stride, int levels,
                                               std::uint64_t salt) {
  set_parent(s, parent);
  if (stride == 1) {  // most ranges: no division
    s.size = last - first + 1;
    s.rank = parent.rank - first;
  } else {
    s.size = (last - first) / stride + 1;
    s.rank = (parent.rank - first) / stride;
  }
  if (parent.table) {
    // A range of a general group: its members are a table again, unless they happen to be
    // evenly spaced on the root. O(size), unlike a range of a range.
    std::vector<int> roots(static_cast<size_t>(s.size));
    for (int i = 0; i < s.size; ++i) roots[i] = parent.to_root(first + i * stride);
    set_members(s, std::move(roots));
  } else {
    s.first = parent.to_root(first);
    s.stride = s.size > 1 ? parent.stride * stride : 1;
  }
  s.depth = parent.depth + levels;
  std::uint64_t digest = detail::digest_range(first, last, stride, levels);
  if (salt != 0) digest = detail::digest_words({digest, salt});
  detail::set_identity(s, parent, digest);
}

// The state behind out when a creation can build in it: out alone holds it, so no operation
// is pending on it and no other handle refers to it (retiring and renewing it gives what
// releasing it and taking a recycled block would, without the block's round trip, a new shared
// pointer, and freeing and allocating its peer table again). Null otherwise: then out's
// communicator is released as usual.
RangeState* reusable(const Comm& out) {
  const std::shared_ptr<RangeState>& s = CommAccess::state(out);
  return s && s.use_count() == 1 ? s.get() : nullptr;
}

// The body of Split_Comm, Split_Comm_below and Split_Comm_salted, inlined into each (Split_Comm's
// levels and salt are then constants, and none calls another).
[[gnu::always_inline]] inline int split(const Comm& parent_comm, int first, int last, int stride,
                                        int levels, std::uint64_t salt, Comm* out) {
  if (out == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Split_Comm: out is null");
  const std::shared_ptr<RangeState>& held = CommAccess::state(parent_comm);
  RangeState* parent = held.get();
  if (parent == nullptr) {
    *out = Comm();
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM,
                         "Split_Comm: the parent is the null communicator");
  }
  MPI_Comm errcomm = parent->errcomm();
  if (parent->channel->closed())
    return detail::raise(errcomm, MPI_ERR_COMM,
                         "Split_Comm: the parent's MPI communicator was freed");
  if (stride < 1)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: stride %d is below 1", stride);
  if (levels < 1)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: levels %d is below 1", levels);
  if (first > last)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: first %d is above last %d", first,
                         last);
  if (first < 0 || last >= parent->size)
    return detail::raise(errcomm, MPI_ERR_RANK,
                         "Split_Comm: range %d..%d is outside the parent's ranks 0..%d", first,
                         last, parent->size - 1);
  int me = parent->rank;
  if (me < first || me > last || (stride != 1 && (me - first) % stride != 0)) {
    *out = Comm();
    return MPI_SUCCESS;
  }
  // out may be the parent's own handle (Split_Comm(c, ..., &c)): then the parent is kept alive
  // by a copy while out is overwritten; otherwise it is only borrowed.
  const bool into_parent = out == &parent_comm;
  try {
    if (RangeState* s = into_parent ? nullptr : reusable(*out)) {  // made anew in place
      if (!s->untouched()) s->retire();
      s->renew();
      build_range(*s, *parent, first, last, stride, levels, salt);
      return MPI_SUCCESS;
    }
    std::shared_ptr<RangeState> kept = into_parent ? held : nullptr;
    *out = Comm();
    std::shared_ptr<RangeState> s = detail::new_range_state();
    build_range(*s, *parent, first, last, stride, levels, salt);
    *out = CommAccess::make(std::move(s));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    *out = Comm();  // a state built halfway is released
    return detail::raise(errcomm, MPI_ERR_NO_MEM, "Split_Comm: out of memory for a new range");
  }
}

}  // namespace

bool Comm_renewable(const Comm& comm) {
  const RangeState* s = reusable(comm);
  return s != nullptr && s->untouched();
}

int Split_Comm(const Comm& parent_comm, int first, int last, int stride, Comm* out) {
  return split(parent_comm, first, last, stride, 1, 0, out);
}

int Split_Comm_below(const Comm& parent_comm, int first, int last, int stride, int levels,
                     Comm* out) {
  return split(parent_comm, first, last, stride, levels, 0, out);
}

int Split_Comm_salted(const Comm& parent_comm, int first, int last, int stride, int levels,
                      std::uint64_t salt, Comm* out) {
  return split(parent_comm, first, last, stride, levels, salt, out);
}

std::uint32_t Comm_context(const Comm& comm) {
  return comm.is_null() ? 0 : static_cast<std::uint32_t>(CommAccess::of(comm)->id.lo & 0x7fffffff);
}

int Comm_rank(const Comm& comm, int* rank) {
  if (comm.is_null())
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Comm_rank: null communicator");
  *rank = comm.rank();
  return MPI_SUCCESS;
}

int Comm_size(const Comm& comm, int* size) {
  if (comm.is_null())
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Comm_size: null communicator");
  *size = comm.size();
  return MPI_SUCCESS;
}

int Comm_free(Comm* comm) {
  if (comm == nullptr || comm->is_null())
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Comm_free: null communicator");
  *comm = Comm();
  return MPI_SUCCESS;
}

}  // namespace rangecomm
