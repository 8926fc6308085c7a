// MPI_Comm_split, MPI_Comm_create and MPI_Comm_create_group on range communicators. Every new
// group becomes a library communicator: a range when it is a strided range of the parent, a
// general group otherwise, made by each member alone (split first exchanges colours and keys).
// Its identity comes from the parent's and the members (docs/tag-layout.md).
#include <algorithm>

#include "comms/creation.h"
#include "comms/split.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "rangecomm/embedding.hpp"

namespace rcshim {

int make_members(const rangecomm::Comm& parent, const SplitPlan& plan, int level,
                 rangecomm::Comm* out) {
  if (!plan.member) return MPI_SUCCESS;
  int first = 0, last = 0, stride = 1;  // the same choice at every member: they share the plan
  if (as_range(plan.ranks, &first, &last, &stride))
    return rangecomm::Split_Comm_below(parent, first, last, stride, level, out);
  return rangecomm::Group_Comm_below(parent, plan.ranks.data(), static_cast<int>(plan.ranks.size()),
                                     level, out);
}

// My colour's group, ordered by key, then rank: one pass, and a sort of my group only.
SplitPlan plan_split(const std::vector<int>& entries, int me) {
  SplitPlan plan;
  const int color = entries[kSplitEntry * me];
  if (color == MPI_UNDEFINED) return plan;
  const int n = static_cast<int>(entries.size() / kSplitEntry);
  std::vector<std::pair<int, int>> members;  // (key, rank)
  for (int r = 0; r < n; ++r)
    if (entries[kSplitEntry * r] == color) members.emplace_back(entries[kSplitEntry * r + 1], r);
  std::sort(members.begin(), members.end());
  plan.member = true;
  plan.ranks.reserve(members.size());
  for (const auto& m : members) plan.ranks.push_back(m.second);
  return plan;
}

bool any_table_low(const std::vector<int>& entries) {
  for (std::size_t i = 2; i < entries.size(); i += kSplitEntry)
    if (entries[i] != 0) return true;
  return false;
}

}  // namespace rcshim

using namespace rcshim;

namespace {

// A split of a library communicator left to MPI (some member's handle table is nearly full):
// MPI splits the range's real fallback communicator (collective over the same members), and
// the result starts with the range's error handler.
int split_through_mpi(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  MPI_Comm real = MPI_COMM_NULL;
  if (int rc = rc_real_comm_of(comm, &real)) return rc;
  int rc;
  {
    Unlocked unlocked;  // a collective of MPI
    rc = MPI_Comm_split(real, color, key, newcomm);
  }
  if (rc != MPI_SUCCESS) return rc;  // raised through the range's handler (fallback.cpp)
  FakeComm* c = find_comm(comm);
  if (*newcomm != MPI_COMM_NULL && c != nullptr) MPI_Comm_set_errhandler(*newcomm, c->errhandler);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int rc_fake_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_split");
  if (color < 0 && color != MPI_UNDEFINED)
    return raise_error(comm, MPI_ERR_ARG, "MPI_Comm_split: color %d is negative", color);
  std::vector<int> entries(kSplitEntry * static_cast<std::size_t>(range.size()));
  int mine[kSplitEntry] = {color, key, comm_handles_low()};
  int rc =
      rangecomm::Allgather(mine, kSplitEntry, MPI_INT, entries.data(), kSplitEntry, MPI_INT, range);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  if (any_table_low(entries)) return split_through_mpi(comm, color, key, newcomm);
  SplitPlan plan = plan_split(entries, range.rank());
  rangecomm::Comm made;
  rc = make_members(range, plan, kCollectiveLevel, &made);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  *newcomm = MPI_COMM_NULL;
  if (!plan.member) return MPI_SUCCESS;
  return new_comm(std::move(made), c->errhandler, newcomm, comm);
}

// Collective over the parent; every process may give its own group (MPI-2.2), and each group's
// members make it alone.
extern "C" int rc_fake_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_create");
  std::vector<int> ranks;
  if (int rc = group_in_comm(comm, group, "MPI_Comm_create", &ranks)) return rc;
  SplitPlan plan;
  plan.member = std::find(ranks.begin(), ranks.end(), range.rank()) != ranks.end();
  plan.ranks = ranks;
  rangecomm::Comm made;
  int rc = make_members(range, plan, kCollectiveLevel, &made);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  *newcomm = MPI_COMM_NULL;
  if (!plan.member) return MPI_SUCCESS;
  return new_comm(std::move(made), c->errhandler, newcomm, comm);
}

extern "C" int rc_fake_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                             MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_create_group");
  if (tag < 0) return raise_error(comm, MPI_ERR_TAG, "MPI_Comm_create_group: tag %d", tag);
  std::vector<int> ranks;
  if (int rc = group_in_comm(comm, group, "MPI_Comm_create_group", &ranks)) return rc;
  if (ranks.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  // Named by its members and tag, also when they are a range: MPI orders only creations with
  // the same group and tag alike at every member, not create_groups against the program's
  // local MPIX_Comm_create_range calls, whose identities count ranges.
  rangecomm::Comm made;
  if (int rc = rangecomm::Comm_create_group(range, ranks.data(), static_cast<int>(ranks.size()),
                                            tag, &made))
    return raise_on(comm, rc);
  if (made.is_null()) {  // not a member (MPI says only members call; tolerated)
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return new_comm(std::move(made), c->errhandler, newcomm, comm);
}
