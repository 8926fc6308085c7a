// General groups: Icomm_create_group and the embedding layer's creations (docs/tag-layout.md,
// "Identities").
//
// Every member derives a new communicator's identity from the parent's and from what the
// creation is (its members, and the tag, the levels or the parent's collective sequence number
// that tells it apart from other creations of the same members), counting repeats of the same
// creation from the parent: no message is needed. Only Icomm_create_agreed, whose callers
// cannot order their creations per parent, agrees on a number drawn at random, in one
// all-reduction over the group.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "comm/range.hpp"
#include "engine/operation.hpp"
#include "engine/request_access.hpp"
#include "p2p/matching.hpp"
#include "rangecomm/collectives.hpp"
#include "rangecomm/embedding.hpp"
#include "rangecomm/group.hpp"
#include "util/errors.hpp"
#include "util/status.hpp"
#include "wire/tag_layout.hpp"

namespace rangecomm::detail {
namespace {

std::uint32_t draw() {
  static std::mt19937 engine(std::random_device{}());
  return static_cast<std::uint32_t>(engine());
}

// The state of this process's member `me` of the group `roots` made from parent with `digest`.
std::shared_ptr<RangeState> group_member(RangeState& parent, std::vector<int> roots, int me,
                                         std::uint64_t digest, int levels) {
  auto s = new_range_state();
  set_parent(*s, parent);
  set_members(*s, std::move(roots));
  s->rank = me;
  s->depth = parent.depth + levels;
  set_identity(*s, parent, digest);
  return s;
}

// Icomm_create_agreed: the members draw 128 random bits each and take the maximum, in one
// all-reduction on a communicator of the group whose identity is derived from the creation's
// serial; the new communicator's identity is derived from that number.
class AgreedCreation final : public Operation {
 public:
  AgreedCreation(const std::shared_ptr<RangeState>& parent, std::vector<int> roots, int me,
                 int serial, Comm* out)
      : parent_(parent), roots_(std::move(roots)), me_(me), out_(out) {
    talk_ =
        group_member(*parent, roots_, me,
                     digest_members(kAgreementTalk, roots_, static_cast<std::uint64_t>(serial)), 1);
    for (auto& w : mine_) w = draw();
  }

  int start() {
    return Iallreduce(mine_, agreed_, 4, MPI_UINT32_T, MPI_MAX, CommAccess::make(talk_), &inner_);
  }

  bool test(MPI_Status* status, int* rc) override {
    if (!finished_) advance();
    if (!finished_) return false;
    set_empty_status(status);
    *rc = rc_;
    return true;
  }
  void cancel() override {}  // like a collective: cannot be cancelled

 private:
  void advance() {
    MPI_Status st;
    int rc = MPI_SUCCESS;
    if (!RequestAccess::test(inner_, &st, &rc)) return;
    finished_ = true;
    rc_ = rc;
    if (rc == MPI_SUCCESS) {
      std::uint64_t digest =
          digest_words({kAgreedCreation, agreed_[0], agreed_[1], agreed_[2], agreed_[3]});
      *out_ = CommAccess::make(group_member(*parent_, std::move(roots_), me_, digest, 1));
    }
    talk_.reset();
    parent_.reset();
  }

  std::shared_ptr<RangeState> parent_, talk_;
  std::vector<int> roots_;
  int me_;
  Comm* out_;
  std::uint32_t mine_[4] = {0, 0, 0, 0}, agreed_[4] = {0, 0, 0, 0};
  Request inner_;
  bool finished_ = false;
  int rc_ = MPI_SUCCESS;
};

// Icomm_create_numbered: waits for the caller's agreement on a number, then makes the
// communicator whose identity that number gives.
class NumberedCreation final : public Operation {
 public:
  NumberedCreation(const std::shared_ptr<RangeState>& parent, std::vector<int> roots, int me,
                   Comm* out)
      : parent_(parent), roots_(std::move(roots)), me_(me), out_(out) {
    for (auto& w : mine_) w = draw();
  }
  const std::uint32_t* mine() const { return mine_; }
  std::uint32_t* agreed() { return agreed_; }
  MPI_Request* agreement() { return &agreement_; }

  bool test(MPI_Status* status, int* rc) override {
    if (!finished_) {
      int flag = 0;
      rc_ = MPI_Test(&agreement_, &flag, MPI_STATUS_IGNORE);
      if (!flag && rc_ == MPI_SUCCESS) return false;
      finished_ = true;
      if (rc_ == MPI_SUCCESS) {
        std::uint64_t digest =
            digest_words({kAgreedCreation, agreed_[0], agreed_[1], agreed_[2], agreed_[3]});
        *out_ = CommAccess::make(group_member(*parent_, std::move(roots_), me_, digest, 1));
      }
      parent_.reset();
    }
    set_empty_status(status);
    *rc = rc_;
    return true;
  }
  void cancel() override {}  // like a collective: cannot be cancelled

 private:
  std::shared_ptr<RangeState> parent_;
  std::vector<int> roots_;
  int me_;
  Comm* out_;
  std::uint32_t mine_[4] = {0, 0, 0, 0}, agreed_[4] = {0, 0, 0, 0};
  MPI_Request agreement_ = MPI_REQUEST_NULL;
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

}  // namespace
}  // namespace rangecomm::detail

namespace rangecomm {

using detail::CommAccess;
using detail::RangeState;
using detail::RequestAccess;

namespace {

// Checks the arguments of a creation from parent_comm; *parent and *roots/*me on success.
int check_creation(const Comm& parent_comm, const int* ranks, int n, Comm* out, Request* request,
                   const char* fn, std::shared_ptr<RangeState>* parent, std::vector<int>* roots,
                   int* me) {
  if (out == nullptr || request == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: out or request is null", fn);
  *parent = CommAccess::state(parent_comm);
  if (!*parent) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: null parent", fn);
  if ((*parent)->channel->closed())
    return detail::raise((*parent)->errcomm(), MPI_ERR_COMM,
                         "%s: the parent's MPI communicator was freed", fn);
  return detail::members(**parent, ranks, n, roots, me);
}

}  // namespace

int Icomm_create_group(const Comm& parent_comm, const int* ranks, int n, int tag, Comm* out,
                       Request* request) {
  std::shared_ptr<RangeState> parent;
  std::vector<int> roots;
  int me = MPI_UNDEFINED;
  if (int rc = check_creation(parent_comm, ranks, n, out, request, "Icomm_create_group", &parent,
                              &roots, &me))
    return rc;
  if (tag < 0)
    return detail::raise(parent->errcomm(), MPI_ERR_TAG, "Icomm_create_group: tag %d", tag);
  *request = Request();
  *out = Comm();
  RequestAccess::set_done(request, MPI_ANY_SOURCE, MPI_ANY_TAG);
  if (me == MPI_UNDEFINED || n == 0) return MPI_SUCCESS;  // not a member: nothing to make
  try {
    // The k-th creation of one group with one tag is the same communicator at every member:
    // MPI orders them (concurrent ones must have different tags).
    std::uint64_t digest =
        detail::digest_members(detail::kGroupCreation, roots, static_cast<std::uint64_t>(tag));
    *out = CommAccess::make(detail::group_member(*parent, std::move(roots), me, digest, 1));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(parent->errcomm(), MPI_ERR_NO_MEM, "Icomm_create_group: out of memory");
  }
}

namespace {

// The shared part of the creations that agree on a number first: checks, a done request for a
// non-member, then the operation make(parent, roots, me) built and started (nullptr and *rc on
// failure), advanced by the engine in every progress call (creations waited on in different
// orders must not stall each other), the request holding the other reference.
template <class Make>
int start_agreement(const Comm& parent_comm, const int* ranks, int n, Comm* out, Request* request,
                    const char* fn, Make&& make) {
  std::shared_ptr<RangeState> parent;
  std::vector<int> roots;
  int me = MPI_UNDEFINED;
  if (int rc = check_creation(parent_comm, ranks, n, out, request, fn, &parent, &roots, &me))
    return rc;
  *request = Request();
  *out = Comm();
  if (me == MPI_UNDEFINED || n == 0) {
    RequestAccess::set_done(request, MPI_ANY_SOURCE, MPI_ANY_TAG);
    return MPI_SUCCESS;
  }
  try {
    int rc = MPI_SUCCESS;
    detail::Operation* op = make(parent, std::move(roots), me, &rc);
    if (op == nullptr) return rc;
    op->ref();
    detail::adopt_orphan(op);
    RequestAccess::set_op(request, op, parent->errcomm());
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(parent->errcomm(), MPI_ERR_NO_MEM, "%s: out of memory", fn);
  }
}

}  // namespace

int Icomm_create_agreed(const Comm& parent_comm, const int* ranks, int n, int serial, Comm* out,
                        Request* request) {
  return start_agreement(parent_comm, ranks, n, out, request, "Icomm_create_agreed",
                         [&](const std::shared_ptr<RangeState>& parent, std::vector<int> roots,
                             int me, int* rc) -> detail::Operation* {
                           auto* op = new detail::AgreedCreation(parent, std::move(roots), me,
                                                                 serial, out);
                           if ((*rc = op->start())) {
                             op->unref();
                             return nullptr;
                           }
                           return op;
                         });
}

int Icomm_create_numbered(
    const Comm& parent_comm, const int* ranks, int n,
    const std::function<int(const std::uint32_t*, std::uint32_t*, MPI_Request*)>& start, Comm* out,
    Request* request) {
  return start_agreement(parent_comm, ranks, n, out, request, "Icomm_create_numbered",
                         [&](const std::shared_ptr<RangeState>& parent, std::vector<int> roots,
                             int me, int* rc) -> detail::Operation* {
                           auto* op =
                               new detail::NumberedCreation(parent, std::move(roots), me, out);
                           if ((*rc = start(op->mine(), op->agreed(), op->agreement()))) {
                             op->unref();
                             return nullptr;
                           }
                           return op;
                         });
}

int Icomm_dup(const Comm& of, Comm* out, Request* request) {
  if (out == nullptr || request == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Icomm_dup: out or request is null");
  std::shared_ptr<RangeState> s = CommAccess::state(of);
  if (s == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Icomm_dup: null communicator");
  *request = Request();
  *out = Comm();
  RequestAccess::set_done(request, MPI_ANY_SOURCE, MPI_ANY_TAG);
  try {
    // A collective of `of`: every member takes the same sequence number for it.
    std::uint64_t digest = detail::digest_words({detail::kDupCreation, s->coll_seq++});
    std::vector<int> roots(static_cast<size_t>(s->size));
    for (int i = 0; i < s->size; ++i) roots[i] = s->to_root(i);
    *out = CommAccess::make(detail::group_member(*s, std::move(roots), s->rank, digest, 1));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(s->errcomm(), MPI_ERR_NO_MEM, "Icomm_dup: out of memory");
  }
}

int Group_Comm_below(const Comm& parent_comm, const int* ranks, int n, int levels, Comm* out) {
  if (out == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Group_Comm_below: out is null");
  std::shared_ptr<RangeState> parent = CommAccess::state(parent_comm);
  *out = Comm();
  if (!parent) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Group_Comm_below: null parent");
  if (levels < 1)
    return detail::raise(parent->errcomm(), MPI_ERR_ARG, "Group_Comm_below: levels %d", levels);
  std::vector<int> roots;
  int me = MPI_UNDEFINED;
  if (int rc = detail::members(*parent, ranks, n, &roots, &me)) return rc;
  if (me == MPI_UNDEFINED) return MPI_SUCCESS;
  try {
    std::uint64_t digest =
        detail::digest_members(detail::kGroupCreation, roots, (std::uint64_t{1} << 40) + levels);
    *out = CommAccess::make(detail::group_member(*parent, std::move(roots), me, digest, levels));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return detail::raise(parent->errcomm(), MPI_ERR_NO_MEM, "Group_Comm_below: out of memory");
  }
}

int Comm_create_group(const Comm& parent, const int* ranks, int n, int tag, Comm* out) {
  Request request;
  if (int rc = Icomm_create_group(parent, ranks, n, tag, out, &request)) return rc;
  return Wait(&request, MPI_STATUS_IGNORE);
}

}  // namespace rangecomm
