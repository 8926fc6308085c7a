#include "range.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <new>
#include <string>

#include "errors.hpp"
#include "matching.hpp"
#include "rangecomm/embedding.hpp"

namespace rangecomm::detail {

RangeState::RangeState() = default;

RangeState::~RangeState() {
  if (registered) channel->unregister_range(this);
}

MatchState& RangeState::matching() {
  if (!match) match = std::make_unique<MatchState>();
  return *match;
}

namespace {

long long floor_div(long long a, long long b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// x with x = a (mod m) and x = b (mod n), or -1 when there is none; result in [0, lcm).
long long crt(long long a, long long m, long long b, long long n, long long* lcm) {
  // Extended Euclid on m, n.
  long long old_r = m, r = n, old_s = 1, s = 0;
  while (r != 0) {
    long long q = old_r / r;
    long long t = old_r - q * r; old_r = r; r = t;
    t = old_s - q * s; old_s = s; s = t;
  }
  long long g = old_r;
  if ((b - a) % g != 0) return -1;
  *lcm = m / g * n;
  // Strides and ranks are ints, so every product below stays under 2^62.
  long long k = ((b - a) / g) % (n / g) * (old_s % (n / g)) % (n / g);
  long long x = (a + k * m) % *lcm;
  return x < 0 ? x + *lcm : x;
}

}  // namespace

GroupTable::GroupTable(std::vector<int> members) : roots(std::move(members)) {
  by_root.reserve(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) by_root.emplace_back(roots[i], static_cast<int>(i));
  std::sort(by_root.begin(), by_root.end());
}

int GroupTable::find(int root_rank) const {
  auto it = std::lower_bound(by_root.begin(), by_root.end(), std::pair{root_rank, INT_MIN});
  return it != by_root.end() && it->first == root_rank ? it->second : MPI_UNDEFINED;
}

namespace {

int common_strided(const RangeState& a, const RangeState& b) {
  long long lo = std::max(a.first, b.first), hi = std::min(a.last(), b.last());
  if (lo > hi) return 0;
  long long sa = a.size > 1 ? a.stride : 1, sb = b.size > 1 ? b.stride : 1;
  long long step = 0;
  long long x = crt(a.first % sa, sa, b.first % sb, sb, &step);
  if (x < 0) return 0;
  long long first_common = x + (floor_div(lo - x - 1, step) + 1) * step;  // smallest >= lo
  if (first_common > hi) return 0;
  return first_common + step <= hi ? 2 : 1;
}

}  // namespace

int common_members_upto2(const RangeState& a, const RangeState& b) {
  if (!a.table && !b.table) return common_strided(a, b);
  // A table is walked member by member: O(size) at creation, like the table itself.
  const RangeState& walk = a.table && (!b.table || a.size <= b.size) ? a : b;
  const RangeState& other = &walk == &a ? b : a;
  int common = 0;
  for (int r = 0; r < walk.size && common < 2; ++r)
    common += other.from_root(walk.to_root(r)) != MPI_UNDEFINED;
  return common;
}

namespace {
// Describes a communicator's members for clash messages.
std::string describe(const RangeState& s) {
  char text[160];
  if (s.table)
    std::snprintf(text, sizeof text, "group of %d members from root rank %d to %d, depth %d",
                  s.size, s.first, s.last(), s.depth);
  else
    std::snprintf(text, sizeof text, "range first %d, stride %d, size %d, depth %d", s.first,
                  s.stride, s.size, s.depth);
  return text;
}

// A table's stand-in for the stride field of its context: a hash of its members.
int table_code(const GroupTable& t) {
  std::uint32_t h = 2166136261u;
  for (int r : t.roots) h = (h ^ static_cast<std::uint32_t>(r)) * 16777619u;
  return static_cast<int>(h >> 1);
}
}  // namespace

bool try_register_range(RangeState& s, std::string* clash) {
  if (s.size < 2) return true;  // a single member only ever talks to itself, off the wire
  const RangeState* other = nullptr;
  if (!s.channel->register_range(&s, &other)) {
    if (clash) *clash = describe(*other);
    return false;
  }
  s.registered = true;
  return true;
}

int register_range(RangeState& s, MPI_Comm errcomm) {
  std::string other;
  if (try_register_range(s, &other)) return MPI_SUCCESS;
  return raise(errcomm, MPI_ERR_COMM,
               "Split_Comm: the new communicator (%s) has the same context as the live %s and "
               "shares two or more members with it; they cannot be told apart (see "
               "docs/tag-layout.md)",
               describe(s).c_str(), other.c_str());
}

void set_context(RangeState& s) {
  const auto& layout = s.channel->layout();
  s.ctx = layout.context(s.depth, s.first, s.last(), s.table ? table_code(*s.table) : s.stride);
  s.lane = layout.lane_of(s.ctx);
  s.tag_base = layout.tag_base(s.ctx);
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

void set_parent(RangeState& s, const RangeState& parent) {
  s.channel = parent.channel;
  s.parent_first = parent.first;
  s.parent_stride = parent.stride;
  s.parent_table = parent.table;
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
int Comm::root_stride() const {
  return state_ && !state_->table ? state_->stride : MPI_UNDEFINED;
}
bool Comm::is_strided_range() const { return state_ && !state_->table; }
int Comm::depth() const { return state_ ? state_->depth : MPI_UNDEFINED; }
MPI_Comm Comm::root_mpi_comm() const { return state_ ? state_->channel->user() : MPI_COMM_NULL; }

namespace {

// What a root communicator carries for us: its channel and its whole-range communicator.
struct Attachment {
  detail::ChannelRef channel;
  std::weak_ptr<RangeState> root;
};

int delete_attachment(MPI_Comm, int, void* value, void*) {
  auto* a = static_cast<Attachment*>(value);
  a->channel->close();
  delete a;
  return MPI_SUCCESS;
}

// At MPI_Finalize (which deletes MPI_COMM_SELF's attributes first) close every channel
// while MPI can still free the lanes.
int close_all_channels(MPI_Comm, int, void*, void*) {
  auto channels = detail::open_channels();
  for (detail::Channel* ch : channels) ch->close();
  return MPI_SUCCESS;
}

int attachment_keyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  if (keyval == MPI_KEYVAL_INVALID) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attachment, &keyval, nullptr);
    int finalize_keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_all_channels, &finalize_keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr);
  }
  return keyval;
}

}  // namespace

int Create_Comm(MPI_Comm mpi_comm, Comm* out) {
  if (out == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Create_Comm: out is null");
  *out = Comm();
  if (mpi_comm == MPI_COMM_NULL)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Create_Comm: MPI_COMM_NULL");
  int keyval = attachment_keyval();
  void* value = nullptr;
  int found = 0;
  int rc = MPI_Comm_get_attr(mpi_comm, keyval, &value, &found);
  if (rc != MPI_SUCCESS) return detail::raise_mpi(MPI_COMM_WORLD, rc, "Create_Comm");
  auto* attachment = static_cast<Attachment*>(value);
  if (!found) {
    detail::ChannelRef channel;
    rc = detail::Channel::open(mpi_comm, &channel);
    if (rc != MPI_SUCCESS) return rc;
    attachment = new Attachment{std::move(channel), {}};
    MPI_Comm_set_attr(mpi_comm, keyval, attachment);
  }
  if (auto root = attachment->root.lock()) {
    *out = CommAccess::make(std::move(root));
    return MPI_SUCCESS;
  }
  auto s = detail::new_range_state();
  s->channel = attachment->channel;
  s->size = s->channel->root_size();
  s->rank = s->channel->root_rank();
  detail::set_context(*s);
  rc = detail::register_range(*s, mpi_comm);
  if (rc != MPI_SUCCESS) return rc;
  attachment->root = s;
  *out = CommAccess::make(std::move(s));
  return MPI_SUCCESS;
}

int Split_Comm(const Comm& parent_comm, int first, int last, int stride, Comm* out) {
  return Split_Comm_below(parent_comm, first, last, stride, 1, out);
}

namespace {
int make_range(const RangeState& parent, int first, int last, int stride, int levels,
               MPI_Comm errcomm, Comm* out);
}  // namespace

int Split_Comm_below(const Comm& parent_comm, int first, int last, int stride, int levels,
                     Comm* out) {
  if (out == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Split_Comm: out is null");
  // out may be the parent's own handle (Split_Comm(c, ..., &c)): then the parent is kept alive
  // by a copy while out is overwritten; otherwise it is only borrowed.
  const std::shared_ptr<RangeState>& held = CommAccess::state(parent_comm);
  const RangeState* parent = held.get();
  std::shared_ptr<RangeState> kept = out == &parent_comm ? held : nullptr;
  if (parent == nullptr) {
    *out = Comm();
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Split_Comm: the parent is the null communicator");
  }
  MPI_Comm errcomm = parent->errcomm();
  if (parent->channel->closed())
    return detail::raise(errcomm, MPI_ERR_COMM, "Split_Comm: the parent's MPI communicator was freed");
  if (stride < 1)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: stride %d is below 1", stride);
  if (levels < 1)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: levels %d is below 1", levels);
  if (first > last)
    return detail::raise(errcomm, MPI_ERR_ARG, "Split_Comm: first %d is above last %d", first, last);
  if (first < 0 || last >= parent->size)
    return detail::raise(errcomm, MPI_ERR_RANK,
                         "Split_Comm: range %d..%d is outside the parent's ranks 0..%d", first,
                         last, parent->size - 1);
  // The handle is overwritten: release what it held first, so that splitting again into the
  // same handle does not clash with the communicator it is about to replace.
  *out = Comm();
  int me = parent->rank;
  if (me < first || me > last || (me - first) % stride != 0) return MPI_SUCCESS;
  try {
    return make_range(*parent, first, last, stride, levels, errcomm, out);
  } catch (const std::bad_alloc&) {
    return detail::raise(errcomm, MPI_ERR_NO_MEM, "Split_Comm: out of memory for a new range");
  }
}

namespace {

// The part of Split_Comm_below that allocates (the new range and its entry in the clash table).
int make_range(const RangeState& parent, int first, int last, int stride, int levels,
               MPI_Comm errcomm, Comm* out) {
  int me = parent.rank;
  auto s = detail::new_range_state();
  set_parent(*s, parent);
  s->size = (last - first) / stride + 1;
  s->rank = (me - first) / stride;
  if (parent.table) {
    // A range of a general group: its members are a table again, unless they happen to be
    // evenly spaced on the root. O(size), unlike a range of a range.
    std::vector<int> roots(static_cast<size_t>(s->size));
    for (int i = 0; i < s->size; ++i) roots[i] = parent.to_root(first + i * stride);
    set_members(*s, std::move(roots));
  } else {
    s->first = parent.to_root(first);
    s->stride = s->size > 1 ? parent.stride * stride : 1;
  }
  s->depth = parent.depth + levels;
  detail::set_context(*s);
  int rc = detail::register_range(*s, errcomm);
  if (rc != MPI_SUCCESS) return rc;
  *out = CommAccess::make(std::move(s));
  return MPI_SUCCESS;
}

}  // namespace

std::uint32_t Comm_context(const Comm& comm) {
  return comm.is_null() ? 0 : comm.state()->ctx;
}

int Comm_rank(const Comm& comm, int* rank) {
  if (comm.is_null()) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Comm_rank: null communicator");
  *rank = comm.rank();
  return MPI_SUCCESS;
}

int Comm_size(const Comm& comm, int* size) {
  if (comm.is_null()) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Comm_size: null communicator");
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
