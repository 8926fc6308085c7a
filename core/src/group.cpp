// General groups: Icomm_create_group (docs/tag-layout.md, "General groups").
//
// A group that is not a strided range agrees on a context in two all-reduces over its members,
// run on a context reserved for creation traffic (TagLayout::creation_context):
//   1. levels: each member reports the nesting levels (depth below the parent, 1..31) at which
//      the group's context clashes with nothing it has live; the AND is the levels free at all.
//   2. verdict: each member registers the group at the chosen level (so that a concurrent
//      creation sees it) and reports whether that clashed; the OR decides. On a clash every
//      member withdraws and the creation repeats at another free level.
// Safety: two creations that share a member m both register at m, one after the other; the
// later one sees the earlier (registered until it completes) and fails. Progress: a retry picks
// among the free levels by a hash of the creation, so two creations part ways.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "errors.hpp"
#include "matching.hpp"
#include "operation.hpp"
#include "status.hpp"
#include "range.hpp"
#include "rangecomm/collectives.hpp"
#include "rangecomm/embedding.hpp"
#include "rangecomm/group.hpp"
#include "request_access.hpp"
#include "tag_layout.hpp"

namespace rangecomm::detail {
namespace {

constexpr int kTagKeys = 2048;       // creation tags are told apart modulo this
constexpr int kSeqPerCreation = 16;  // collective sequence numbers per creation tag
constexpr int kMaxAttempts = 1000;

class GroupCreation;
// Creations in flight on this process (to refuse two with the same tag key on one group).
std::vector<GroupCreation*>& in_flight() {
  static auto* list = new std::vector<GroupCreation*>;
  return *list;
}

// Where a creation's all-reductions run: on the creation context of the parent's channel, told
// apart from concurrent creations by the tag key (Icomm_create_group, the shim's agreed
// creations); or as one collective of the parent itself, which every member calls in the same
// order as the parent's other collectives (Icomm_dup).
enum class Talk { creation_context, parent_collective };
constexpr int kDupSpace = 2;  // a Talk::parent_collective creation (never a tag clash)

std::uint32_t draw() {
  static std::minstd_rand engine(std::random_device{}());
  return static_cast<std::uint32_t>(engine());
}

class GroupCreation final : public Operation {
 public:
  GroupCreation(const std::shared_ptr<RangeState>& parent, std::shared_ptr<const GroupTable> table,
                int my_rank, int tag, int space, Comm* out)
      : parent_(parent), out_(out), tag_key_(tag % kTagKeys), space_(space) {
    talk_ = new_range_state();
    set_parent(*talk_, *parent);
    talk_->table = std::move(table);
    talk_->first = talk_->table->roots.front();
    talk_->stride = 0;
    talk_->size = static_cast<int>(talk_->table->roots.size());
    talk_->rank = my_rank;
    const TagLayout& layout = parent->channel->layout();
    if (space == kDupSpace) {  // the parent's own context and its next collective number
      talk_->ctx = parent->ctx;
      talk_->lane = parent->lane;
      talk_->tag_base = parent->tag_base;
      parent_seq_ = parent->coll_seq++;
    } else {
      talk_->ctx = layout.creation_context(space);
      talk_->lane = layout.lane_of(talk_->ctx);
      talk_->tag_base = layout.tag_base(talk_->ctx);
    }
    const auto& roots = talk_->table->roots;
    strided_ = roots.size() < 2 || roots[1] > roots[0];
    for (size_t i = 2; i < roots.size() && strided_; ++i)
      strided_ = roots[i] - roots[i - 1] == roots[1] - roots[0];
    in_flight().push_back(this);
  }
  ~GroupCreation() override { leave_in_flight(); }

  const RangeState& talk() const { return *talk_; }
  int tag_key() const { return tag_key_; }
  int space() const { return space_; }

  int start() { return start_levels(); }

  bool test(MPI_Status* status, int* rc) override {
    if (!finished_) advance();
    if (!finished_) return false;
    set_empty_status(status);
    *rc = rc_;
    return true;
  }
  void cancel() override {}  // like a collective: cannot be cancelled

 private:
  void leave_in_flight() {
    auto& list = in_flight();
    list.erase(std::remove(list.begin(), list.end(), this), list.end());
  }
  void finish(int rc) {
    rc_ = rc;
    finished_ = true;
    candidate_.reset();
    leave_in_flight();
  }

  // Runs one all-reduce of `words` 32-bit words over the group. The creation's all-reductions
  // follow each other, so reusing a sequence number is safe: MPI delivers the messages of one
  // sender and tag in order.
  int reduce(MPI_Op op, int words) {
    talk_->coll_seq =
        space_ == kDupSpace
            ? parent_seq_
            : static_cast<std::uint32_t>(tag_key_ * kSeqPerCreation + seq_++ % kSeqPerCreation);
    return Iallreduce(mine_, agreed_, words, MPI_UINT32_T, op, CommAccess::make(talk_), &inner_);
  }

  // A member's state of the group at `level` below the parent (not registered).
  std::shared_ptr<RangeState> at_level(int level) const {
    auto s = new_range_state();
    set_parent(*s, *parent_);
    if (strided_) {
      set_members(*s, talk_->table->roots);  // a range again, as Split_Comm makes it
    } else {
      s->table = talk_->table;
      s->first = talk_->first;
      s->stride = 0;
      s->size = talk_->size;
    }
    s->rank = talk_->rank;
    s->depth = parent_->depth + level;
    set_context(*s);
    return s;
  }

  int start_levels() {
    phase_ = Phase::levels;
    mine_[0] = 0;
    auto probe = at_level(1);
    // The library's own agreed creations leave level 1 to local ones (Split_Comm, and
    // MPIX_Comm_create_range in the shim), which cannot see them coming.
    for (int level = space_ != 0 ? 2 : 1; level < 32; ++level) {
      probe->depth = parent_->depth + level;
      set_context(*probe);
      if (parent_->channel->context_free_for(*probe)) mine_[0] |= 1u << level;
    }
    return reduce(MPI_BAND, 1);
  }

  int start_verdict(std::uint32_t free_levels) {
    int count = __builtin_popcount(free_levels);
    // First attempt: the lowest free level. Later ones: one drawn by the number the members
    // agreed on in the last verdict, so that two creations that collided part ways.
    unsigned pick = attempt_ > 0 ? drawn_ % static_cast<unsigned>(count) : 0;
    std::uint32_t bits = free_levels;
    for (unsigned i = 0; i < pick; ++i) bits &= bits - 1;
    level_ = __builtin_ctz(bits);
    candidate_ = at_level(level_);
    // The verdict is a maximum: of the clash flags (any clash), and of numbers drawn at random
    // (the one all members then use to pick the next level).
    mine_[0] = try_register_range(*candidate_, nullptr) ? 0 : 1;
    mine_[1] = draw();
    phase_ = Phase::verdict;
    return reduce(MPI_MAX, 2);
  }

  void advance() {
    MPI_Status st;
    int rc = MPI_SUCCESS;
    if (!RequestAccess::test(inner_, &st, &rc)) return;
    if (rc != MPI_SUCCESS) return finish(rc);
    if (phase_ == Phase::levels) {
      std::uint32_t free_levels = agreed_[0] & ~1u;
      if (free_levels == 0)
        return finish(Make_error(MPI_ERR_COMM,
                            "Icomm_create_group: every one of the 31 nesting levels below the "
                            "parent holds a communicator that clashes with the group at some "
                            "member; free some"));
      if (int e = start_verdict(free_levels)) return finish(e);
      return;
    }
    if (agreed_[0] == 0) {  // no member saw a clash: the group is made
      *out_ = CommAccess::make(std::move(candidate_));
      return finish(MPI_SUCCESS);
    }
    candidate_.reset();  // withdraws it everywhere
    drawn_ = agreed_[1];
    if (++attempt_ == kMaxAttempts)
      return finish(Make_error(MPI_ERR_OTHER,
                          "Icomm_create_group: no context agreed after %d attempts", attempt_));
    if (int e = start_levels()) return finish(e);
  }

  enum class Phase { levels, verdict };
  std::shared_ptr<RangeState> parent_, talk_, candidate_;
  Comm* out_;
  int tag_key_, space_;
  Phase phase_ = Phase::levels;
  int attempt_ = 0, level_ = 0;
  std::uint32_t seq_ = 0, parent_seq_ = 0, drawn_ = 0;
  std::uint32_t mine_[2] = {0, 0}, agreed_[2] = {0, 0};
  Request inner_;
  bool strided_ = false;  // the members are evenly spaced, ascending: the result is a range
  bool finished_ = false;
  int rc_ = MPI_SUCCESS;
};

// Checks the ranks and returns the members' root ranks in *roots and this process's rank among
// them in *me (MPI_UNDEFINED if it is not one).
int members(const RangeState& parent, const int* ranks, int n, std::vector<int>* roots, int* me) {
  MPI_Comm errcomm = parent.errcomm();
  if (n < 0) return raise(errcomm, MPI_ERR_GROUP, "Icomm_create_group: %d members", n);
  if (n > 0 && ranks == nullptr)
    return raise(errcomm, MPI_ERR_ARG, "Icomm_create_group: ranks is null");
  roots->resize(static_cast<size_t>(n));
  *me = MPI_UNDEFINED;
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= parent.size)
      return raise(errcomm, MPI_ERR_RANK,
                   "Icomm_create_group: member %d is rank %d, outside the parent's 0..%d", i,
                   ranks[i], parent.size - 1);
    (*roots)[i] = parent.to_root(ranks[i]);
    if (ranks[i] == parent.rank) *me = i;
  }
  std::vector<int> sorted = *roots;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end())
    return raise(errcomm, MPI_ERR_GROUP,
                 "Icomm_create_group: a process (root rank %d) is in the group twice", *dup);
  return MPI_SUCCESS;
}

bool is_strided(const int* ranks, int n) {
  if (n <= 1) return true;
  int stride = ranks[1] - ranks[0];
  if (stride < 1) return false;
  for (int i = 2; i < n; ++i)
    if (ranks[i] - ranks[i - 1] != stride) return false;
  return true;
}

// A concurrent creation with the same tag key on a group sharing two or more members.
const GroupCreation* tag_clash(const RangeState& talk, int tag_key, int space) {
  for (const GroupCreation* other : in_flight())
    if (other->tag_key() == tag_key && other->space() == space &&
        other->talk().channel == talk.channel &&
        common_members_upto2(other->talk(), talk) >= 2)
      return other;
  return nullptr;
}

}  // namespace
}  // namespace rangecomm::detail

namespace rangecomm {

using detail::CommAccess;
using detail::RangeState;
using detail::RequestAccess;

namespace {

// Icomm_create_group, and the library's own creations (space 1, always agreed).
int start_creation(const Comm& parent_comm, const int* ranks, int n, int tag, int space,
                   Comm* out, Request* request) {
  if (out == nullptr || request == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Icomm_create_group: out or request is null");
  std::shared_ptr<RangeState> parent = CommAccess::state(parent_comm);
  if (!parent)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Icomm_create_group: null parent");
  MPI_Comm errcomm = parent->errcomm();
  if (parent->channel->closed())
    return detail::raise(errcomm, MPI_ERR_COMM,
                         "Icomm_create_group: the parent's MPI communicator was freed");
  if (tag < 0) return detail::raise(errcomm, MPI_ERR_TAG, "Icomm_create_group: tag %d", tag);
  std::vector<int> roots;
  int me = MPI_UNDEFINED;
  if (int rc = detail::members(*parent, ranks, n, &roots, &me)) return rc;
  *request = Request();
  if (me == MPI_UNDEFINED || n == 0) {  // not a member: nothing to make
    *out = Comm();
    RequestAccess::set_done(request, MPI_ANY_SOURCE, MPI_ANY_TAG);
    return MPI_SUCCESS;
  }
  if (space == 0 && detail::is_strided(ranks, n)) {
    int stride = n > 1 ? ranks[1] - ranks[0] : 1;
    if (int rc = Split_Comm(parent_comm, ranks[0], ranks[n - 1], stride, out)) return rc;
    RequestAccess::set_done(request, MPI_ANY_SOURCE, MPI_ANY_TAG);
    return MPI_SUCCESS;
  }
  *out = Comm();
  try {
    auto table = std::make_shared<const detail::GroupTable>(std::move(roots));
    auto* op = new detail::GroupCreation(parent, std::move(table), me, tag, space, out);
    const auto* other =
        space == detail::kDupSpace ? nullptr : detail::tag_clash(op->talk(), op->tag_key(), space);
    if (other != nullptr && other != op) {
      op->unref();
      return detail::raise(errcomm, MPI_ERR_TAG,
                           "Icomm_create_group: tag %d is in use (modulo %d) by another "
                           "creation in flight on an overlapping group",
                           tag, detail::kTagKeys);
    }
    if (int rc = op->start()) {
      op->unref();
      return rc;
    }
    // The engine advances it in every progress call (creations waited on in different orders
    // must not stall each other); the request holds the other reference.
    op->ref();
    detail::adopt_orphan(op);
    RequestAccess::set_op(request, op, errcomm);
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(errcomm, MPI_ERR_NO_MEM, "Icomm_create_group: out of memory");
  }
}

}  // namespace

int Icomm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out,
                       Request* request) {
  return start_creation(parent, ranks, n, tag, 0, out, request);
}

int Icomm_create_agreed(const Comm& parent, const int* ranks, int n, int serial, Comm* out,
                        Request* request) {
  return start_creation(parent, ranks, n, serial % detail::kTagKeys, 1, out, request);
}

int Icomm_dup(const Comm& of, Comm* out, Request* request) {
  const RangeState* s = CommAccess::state(of).get();
  if (s == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Icomm_dup: null communicator");
  std::vector<int> all(static_cast<size_t>(s->size));
  for (int i = 0; i < s->size; ++i) all[i] = i;
  return start_creation(of, all.data(), s->size, 0, detail::kDupSpace, out, request);
}

namespace {
// The state of the group of ranks `levels` below parent, or null when this process is not a
// member (or an error code in *rc).
std::shared_ptr<RangeState> group_state(const std::shared_ptr<RangeState>& parent, const int* ranks,
                                        int n, int levels, int* rc) {
  std::vector<int> roots;
  int me = MPI_UNDEFINED;
  *rc = detail::members(*parent, ranks, n, &roots, &me);
  if (*rc != MPI_SUCCESS || me == MPI_UNDEFINED) return nullptr;
  auto s = detail::new_range_state();
  detail::set_parent(*s, *parent);
  detail::set_members(*s, std::move(roots));
  s->rank = me;
  s->depth = parent->depth + levels;
  detail::set_context(*s);
  return s;
}
}  // namespace

int Group_Comm_below(const Comm& parent_comm, const int* ranks, int n, int levels, Comm* out) {
  if (out == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Group_Comm_below: out is null");
  std::shared_ptr<RangeState> parent = CommAccess::state(parent_comm);
  *out = Comm();
  if (!parent) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Group_Comm_below: null parent");
  if (levels < 1) return detail::raise(parent->errcomm(), MPI_ERR_ARG, "Group_Comm_below: levels %d", levels);
  try {
    int rc = MPI_SUCCESS;
    auto s = group_state(parent, ranks, n, levels, &rc);
    if (!s) return rc;
    if ((rc = detail::register_range(*s, parent->errcomm()))) return rc;
    *out = CommAccess::make(std::move(s));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(parent->errcomm(), MPI_ERR_NO_MEM, "Group_Comm_below: out of memory");
  }
}

std::uint32_t Free_levels(const Comm& parent_comm, const int* ranks, int n) {
  std::shared_ptr<RangeState> parent = CommAccess::state(parent_comm);
  int rc = MPI_SUCCESS;
  auto s = parent ? group_state(parent, ranks, n, 1, &rc) : nullptr;
  if (!s) return ~0u;
  std::uint32_t mask = 0;
  for (int level = 1; level < 32; ++level) {
    s->depth = parent->depth + level;
    detail::set_context(*s);
    if (parent->channel->context_free_for(*s)) mask |= 1u << level;
  }
  return mask;
}

int Comm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out) {
  Request request;
  if (int rc = Icomm_create_group(parent, ranks, n, tag, out, &request)) return rc;
  return Wait(&request, MPI_STATUS_IGNORE);
}

}  // namespace rangecomm
