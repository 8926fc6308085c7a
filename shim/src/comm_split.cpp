// MPI_Comm_split, MPI_Comm_create and MPI_Comm_create_group on range communicators. A new
// group that is a strided range of the parent becomes a range communicator; any other group
// becomes a real communicator, made on the parent's fallback communicator (split, create:
// collective over the parent) or on the shim's group channel (create_group: collective over
// the group only).
#include <algorithm>
#include <map>

#include "objects.h"
#include "p2p_support.h"
#include "rangecomm/embedding.hpp"

namespace rcshim {
namespace {

// A real communicator made for a range takes the range's error handler, as MPI's new
// communicators take their parent's.
void adopt_handler(MPI_Comm made, MPI_Errhandler eh) {
  if (made != MPI_COMM_NULL) MPI_Comm_set_errhandler(made, eh);
}

}  // namespace

// Groups ordered by key, then rank.
SplitPlan plan_split(const std::vector<int>& color_key, int me) {
  std::map<int, std::vector<std::pair<int, int>>> groups;  // color -> (key, rank)
  int n = static_cast<int>(color_key.size() / 2);
  for (int r = 0; r < n; ++r)
    if (color_key[2 * r] != MPI_UNDEFINED)
      groups[color_key[2 * r]].push_back({color_key[2 * r + 1], r});
  SplitPlan plan;
  for (auto& [color, members] : groups) {
    std::sort(members.begin(), members.end());
    std::vector<int> ranks;
    for (auto& m : members) ranks.push_back(m.second);
    int f = 0, l = 0, s = 1;
    bool is_range = as_range(ranks, &f, &l, &s);
    plan.all_ranges &= is_range;
    if (color == color_key[2 * me]) plan = {true, is_range, f, l, s, plan.all_ranges};
  }
  return plan;
}

}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_split");
  if (color < 0 && color != MPI_UNDEFINED)
    return raise_error(comm, MPI_ERR_ARG, "MPI_Comm_split: color %d is negative", color);
  std::vector<int> color_key(2 * range.size());
  int mine[2] = {color, key};
  int rc = rangecomm::Allgather(mine, 2, MPI_INT, color_key.data(), 2, MPI_INT, range);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  SplitPlan plan = plan_split(color_key, range.rank());
  std::uint32_t mask = plan.range ? free_levels(range, plan.first, plan.last, plan.stride) : ~0u;
  std::uint32_t common = 0;
  if ((rc = agree(range, mask, &common))) return raise_on(comm, rc);
  int level = lowest_level(common);
  *newcomm = MPI_COMM_NULL;
  if (!plan.all_ranges || level == 0) {  // collective over the parent: everyone comes here
    MPI_Comm real = MPI_COMM_NULL;
    if ((rc = rc_real_comm_of(comm, &real))) return rc;
    bool stays_range = plan.range && level != 0;
    rc = MPI_Comm_split(real, stays_range ? MPI_UNDEFINED : color, key, newcomm);
    if (rc != MPI_SUCCESS) return raise_on(comm, rc);
    adopt_handler(*newcomm, c->errhandler);
    if (!stays_range) return MPI_SUCCESS;
  }
  if (!plan.member) return MPI_SUCCESS;
  rangecomm::Comm made;
  rc = rangecomm::Split_Comm_below(range, plan.first, plan.last, plan.stride, level, &made);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  return new_comm(std::move(made), c->errhandler, newcomm);
}

// Collective over the parent; every process may give its own group (MPI-2.2), so whether all
// groups are ranges is agreed in bit 0 of the level mask.
extern "C" int rc_fake_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_create");
  std::vector<int> ranks;
  if (int rc = group_in_comm(comm, group, "MPI_Comm_create", &ranks)) return rc;
  bool member = std::find(ranks.begin(), ranks.end(), range.rank()) != ranks.end();
  int f = 0, l = 0, s = 1;
  bool is_range = ranks.empty() || as_range(ranks, &f, &l, &s);
  std::uint32_t mask = member && is_range ? free_levels(range, f, l, s) : ~1u;
  if (is_range) mask |= 1u;
  std::uint32_t common = 0;
  if (int rc = agree(range, mask, &common)) return raise_on(comm, rc);
  int level = lowest_level(common);
  *newcomm = MPI_COMM_NULL;
  if (!(common & 1u) || level == 0) {
    MPI_Comm real = MPI_COMM_NULL;
    if (int rc = rc_real_comm_of(comm, &real)) return rc;
    if (int rc = MPI_Comm_create(real, group, newcomm)) return raise_on(comm, rc);
    adopt_handler(*newcomm, c->errhandler);
    return MPI_SUCCESS;
  }
  if (!member) return MPI_SUCCESS;
  rangecomm::Comm made;
  if (int rc = rangecomm::Split_Comm_below(range, f, l, s, level, &made)) return raise_on(comm, rc);
  return new_comm(std::move(made), c->errhandler, newcomm);
}

namespace {

// create_group traffic of different parents meets on the one group channel: the parent's
// context (distinct for live overlapping parents) goes into the tag next to the user's.
int channel_tag(const rangecomm::Comm& parent, int tag) {
  static int tag_ub = 0;
  if (tag_ub == 0) {
    void* v = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(group_channel(), MPI_TAG_UB, &v, &flag);
    tag_ub = flag ? *static_cast<int*>(v) : 32767;
  }
  unsigned long long t = (static_cast<unsigned long long>(rangecomm::Comm_context(parent)) << 15) |
                         static_cast<unsigned>(tag & 0x7fff);
  return static_cast<int>(t % (static_cast<unsigned long long>(tag_ub) + 1));
}

}  // namespace

extern "C" int rc_fake_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                             MPI_Comm* newcomm) {
  RC_FAKE_RANGE("MPI_Comm_create_group");
  if (tag < 0) return raise_error(comm, MPI_ERR_TAG, "MPI_Comm_create_group: tag %d", tag);
  std::vector<int> ranks;
  if (int rc = group_in_comm(comm, group, "MPI_Comm_create_group", &ranks)) return rc;
  int f = 0, l = 0, s = 1;
  if (ranks.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  if (as_range(ranks, &f, &l, &s))
    return create_range(comm, f, l, s, "MPI_Comm_create_group", newcomm);
  MPI_Group there;
  int rc = group_on(group_channel(), group, &there);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  rc = MPI_Comm_create_group(group_channel(), there, channel_tag(range, tag), newcomm);
  MPI_Group_free(&there);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  adopt_handler(*newcomm, c->errhandler);
  return MPI_SUCCESS;
}
