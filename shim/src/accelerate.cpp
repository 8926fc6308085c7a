// RANGECOMM_MODE=accelerate: communicators an unmodified program makes from real
// intracommunicators of MPI_COMM_WORLD's processes (the world, its dups, any split or merge)
// become library communicators of the world's range, so they cost no MPI context id:
// - MPI_Comm_dup(_with_info), MPI_Comm_split, MPI_Comm_split_type (MPI_COMM_TYPE_SHARED) and
//   MPI_Comm_create are collective over the parent: each member makes its communicator alone
//   (split after exchanging colours and keys), its identity derived from the members and how
//   many such creations came before (docs/tag-layout.md). A program orders the creations on
//   one parent alike at every member, and those of different parents with the same members
//   too, or it would not run natively. The results are ranges, or general groups when their
//   members are not evenly spaced.
// - MPI_Comm_create_group (collective over the group) and MPI_Comm_idup (nonblocking) agree
//   among the members with rangecomm::Icomm_create_agreed.
// Other creation calls, other split types and parents that do not map into the world stay with
// MPI. Without the variable (or RANGECOMM_MODE=off) these hooks cost the real call one load.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "objects.h"
#include "rangecomm/embedding.hpp"

namespace rcshim {

int g_accelerate = 0;
int g_shadow = 0;

void read_mode() {
  const char* v = std::getenv("RANGECOMM_MODE");
  g_shadow = v != nullptr && std::strcmp(v, "shadow") == 0;
  g_accelerate = g_shadow || (v != nullptr && std::strcmp(v, "accelerate") == 0);
}

namespace {

// The exchanges run as the program's own collectives on the parent would, under the progress
// rule (rc_blocking_*: range operations still pending keep moving while it waits), and without
// the library lock: MPI may block here until other processes' threads arrive.
Reduce reduce_on(MPI_Comm parent) {
  return [parent](const std::uint32_t* in, std::uint32_t* out, int n, MPI_Op op) {
    Unlocked unlocked;
    if (rangecomm::Progress_needed())
      return rc_blocking_MPI_Allreduce(in, out, n, MPI_UINT32_T, op, parent);
    return MPI_Allreduce(in, out, n, MPI_UINT32_T, op, parent);
  };
}

int allgather_ints(MPI_Comm parent, int* mine, int n, std::vector<int>* all) {
  Unlocked unlocked;
  if (rangecomm::Progress_needed())
    return rc_blocking_MPI_Allgather(mine, n, MPI_INT, all->data(), n, MPI_INT, parent);
  return MPI_Allgather(mine, n, MPI_INT, all->data(), n, MPI_INT, parent);
}

// Makes this process's group of world ranks `members` for a creation collective over the real
// parent (none for a non-member). *made is false (everywhere alike) when a bit of `required` in
// `facts` is missing somewhere: MPI must do it.
int make_group(MPI_Comm parent, bool member, const std::vector<int>& members,
               std::uint32_t facts, std::uint32_t required, MPI_Comm* newcomm, bool* made) {
  SplitPlan plan;
  plan.member = member;
  plan.ranks = members;
  rangecomm::Comm mine;
  int rc = make_collective(
      reduce_on(parent), facts, required,
      [&](int level, rangecomm::Comm* out) { return make_members(world_range(), plan, level, out); },
      made, &mine);
  if (rc != MPI_SUCCESS) return raise_on(parent, rc);
  if (!*made) return MPI_SUCCESS;
  *newcomm = MPI_COMM_NULL;
  return member ? new_comm(std::move(mine), inherited_errhandler(parent), newcomm) : MPI_SUCCESS;
}

// The parent's ranks as world ranks.
std::vector<int> world_ranks(const RangeParent& p, const std::vector<int>& ranks) {
  std::vector<int> out(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) out[i] = p.in_range(ranks[i]);
  return out;
}

// MPI_Comm_dup(_with_info) of a real communicator; `made` is false when MPI must do it.
int accelerated_dup(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, bool* made) {
  *made = false;
  RangeParent p;
  if (!mapped_parent(comm, &p)) return MPI_SUCCESS;
  std::vector<int> all(static_cast<size_t>(p.size));
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> members = world_ranks(p, all);
  int rc = make_group(comm, true, members, 0, 0, newcomm, made);
  if (rc != MPI_SUCCESS || !*made) return rc;
  FakeComm* d = find_comm(*newcomm);
  if (info != MPI_INFO_NULL) {
    MPI_Info_dup(info, &d->info);
  } else {
    MPI_Comm_get_info(comm, &d->info);
  }
  if ((rc = copy_real_attributes(comm, *d)) == MPI_SUCCESS) return MPI_SUCCESS;
  delete_all_attributes(*newcomm, *d);
  release_comm(*newcomm);
  *newcomm = MPI_COMM_NULL;
  return raise_on(comm, rc);
}

// The groups of a split whose (colour, key) pairs every process has.
int split_by_pairs(MPI_Comm comm, const RangeParent& p, const std::vector<int>& color_key,
                   MPI_Comm* newcomm, bool* made) {
  // A negative colour is an error MPI reports; every process sees it and lets MPI split.
  for (int r = 0; r < p.size; ++r)
    if (color_key[2 * r] < 0 && color_key[2 * r] != MPI_UNDEFINED) return MPI_SUCCESS;
  SplitPlan plan = plan_split(color_key, p.rank);
  return make_group(comm, plan.member, world_ranks(p, plan.ranks), 0, 0, newcomm,
                              made);
}

// MPI_Comm_split of a real communicator: ranges for everyone when every group is one.
int accelerated_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm, bool* made) {
  *made = false;
  RangeParent p;
  if (!mapped_parent(comm, &p)) return MPI_SUCCESS;
  std::vector<int> color_key(2 * static_cast<size_t>(p.size));
  int mine[2] = {color, key};
  if (int rc = allgather_ints(comm, mine, 2, &color_key)) return rc;
  return split_by_pairs(comm, p, color_key, newcomm, made);
}

// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of a real communicator: the processes of one host
// (same MPI_Get_processor_name) are one group, ordered by key; the colour is the lowest parent
// rank on the host. Other split types stay with MPI.
int accelerated_split_type(MPI_Comm comm, int type, int key, MPI_Comm* newcomm, bool* made) {
  *made = false;
  RangeParent p;
  if ((type != MPI_COMM_TYPE_SHARED && type != MPI_UNDEFINED) || !mapped_parent(comm, &p))
    return MPI_SUCCESS;
  // Every process learns every host name and key (an MPI_UNDEFINED type takes no part).
  const int width = MPI_MAX_PROCESSOR_NAME + 2;  // name, then the flag and the key
  std::vector<int> mine(width, 0), all(static_cast<size_t>(width) * p.size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  for (int i = 0; i < len; ++i) mine[i] = static_cast<unsigned char>(name[i]);
  mine[width - 2] = type == MPI_UNDEFINED;
  mine[width - 1] = key;
  if (int rc = allgather_ints(comm, mine.data(), width, &all)) return rc;
  std::vector<int> color_key(2 * static_cast<size_t>(p.size));
  for (int r = 0; r < p.size; ++r) {
    const int* row = &all[static_cast<size_t>(r) * width];
    int color = MPI_UNDEFINED;
    for (int q = 0; q <= r && !row[width - 2]; ++q)
      if (std::equal(row, row + width - 2, &all[static_cast<size_t>(q) * width])) {
        color = q;
        break;
      }
    color_key[2 * r] = color;
    color_key[2 * r + 1] = row[width - 1];
  }
  return split_by_pairs(comm, p, color_key, newcomm, made);
}

// MPI_Comm_create of a real communicator (each process may pass its own group, MPI-2.2).
int accelerated_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm, bool* made) {
  *made = false;
  RangeParent p;
  if (!mapped_parent(comm, &p)) return MPI_SUCCESS;
  // A bad group only clears this process's bit 0: everyone still meets in the agreement, and
  // MPI's own MPI_Comm_create then reports the error.
  int n = 0;
  bool subset = MPI_Group_size(group, &n) == MPI_SUCCESS;
  std::vector<int> in_group(static_cast<size_t>(n)), ranks(static_cast<size_t>(n), MPI_UNDEFINED);
  for (int i = 0; i < n; ++i) in_group[i] = i;
  MPI_Group parent_group;
  MPI_Comm_group(comm, &parent_group);
  subset = subset && MPI_Group_translate_ranks(group, n, in_group.data(), parent_group,
                                               ranks.data()) == MPI_SUCCESS;
  MPI_Group_free(&parent_group);
  subset = subset && std::find(ranks.begin(), ranks.end(), MPI_UNDEFINED) == ranks.end();
  bool member = std::find(ranks.begin(), ranks.end(), p.rank) != ranks.end();
  std::vector<int> members = subset ? world_ranks(p, ranks) : std::vector<int>();
  // Without bit 0 everywhere (some group is bad) MPI creates, and checks, it.
  return make_group(comm, member && subset, members, subset ? 1u : 0u, 1u, newcomm,
                              made);
}

// The parent's ranks of group's members, or false when group is not a subset of the parent.
bool ranks_in_parent(MPI_Comm comm, MPI_Group group, std::vector<int>* ranks) {
  int n = 0;
  if (MPI_Group_size(group, &n) != MPI_SUCCESS) return false;
  std::vector<int> in_group(static_cast<size_t>(n));
  ranks->assign(static_cast<size_t>(n), MPI_UNDEFINED);
  for (int i = 0; i < n; ++i) in_group[i] = i;
  MPI_Group parent_group;
  if (MPI_Comm_group(comm, &parent_group) != MPI_SUCCESS) return false;
  bool ok = MPI_Group_translate_ranks(group, n, in_group.data(), parent_group, ranks->data()) ==
            MPI_SUCCESS;
  MPI_Group_free(&parent_group);
  return ok && std::find(ranks->begin(), ranks->end(), MPI_UNDEFINED) == ranks->end();
}

// MPI_Comm_create_group of a real communicator: collective over the group only, and groups of
// different real parents reach the library as groups of the world, so the members agree on a
// number that names the creation (one all-reduction over the group). A group that is not a
// subset, a caller outside it or a negative tag are left to MPI, which reports them.
int accelerated_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm,
                             bool* made) {
  *made = false;
  RangeParent p;
  std::vector<int> ranks;
  if (tag < 0 || !mapped_parent(comm, &p) || !ranks_in_parent(comm, group, &ranks) ||
      std::find(ranks.begin(), ranks.end(), p.rank) == ranks.end())
    return MPI_SUCCESS;
  std::vector<int> members = world_ranks(p, ranks);
  rangecomm::Comm result;
  rangecomm::Request request;
  int rc = rangecomm::Icomm_create_agreed(world_range(), members.data(),
                                          static_cast<int>(members.size()), tag, &result,
                                          &request);
  if (rc == MPI_SUCCESS) rc = rangecomm::Wait(&request, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  *made = true;
  return new_comm(std::move(result), inherited_errhandler(comm), newcomm);
}

// *newcomm, an intracommunicator MPI has just made (a split of a type the library cannot
// compute, under both modes; a merge of an intercommunicator, under shadow), becomes a library communicator of the same
// processes in the same order, made by each member alone, and MPI's is freed. It stays MPI's
// when it is an intercommunicator or has processes outside the world.
int shadow_replace(MPI_Comm* newcomm) {
  MPI_Comm real = *newcomm;
  int inter = 0;
  RangeParent p;
  if (real == MPI_COMM_NULL || MPI_Comm_test_inter(real, &inter) != MPI_SUCCESS || inter ||
      !mapped_parent(real, &p))
    return MPI_SUCCESS;
  std::vector<int> all(static_cast<size_t>(p.size));
  std::iota(all.begin(), all.end(), 0);
  bool made = false;
  MPI_Comm library = MPI_COMM_NULL;
  int rc = make_group(real, true, world_ranks(p, all), 0, 0, &library, &made);
  if (rc != MPI_SUCCESS || !made) return rc;
  MPI_Comm_get_info(real, &find_comm(library)->info);
  *newcomm = library;
  Unlocked unlocked;
  return MPI_Comm_free(&real);
}

// MPI_Comm_idup of a real communicator: the handle at once, the copy when the request
// completes, named by a number agreed in one MPI_Iallreduce on the parent.
int accelerated_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request, bool* made) {
  *made = false;
  RangeParent p;
  if (!mapped_parent(comm, &p)) return MPI_SUCCESS;
  std::vector<int> all(static_cast<size_t>(p.size));
  for (int i = 0; i < p.size; ++i) all[i] = i;
  std::vector<int> members = world_ranks(p, all);
  *made = true;
  if (int rc = new_pending_comm(inherited_errhandler(comm), newcomm)) return rc;
  FakeComm* d = find_comm(*newcomm);
  MPI_Comm_get_info(comm, &d->info);
  if (int rc = copy_real_attributes(comm, *d)) {
    delete_all_attributes(*newcomm, *d);
    release_comm(*newcomm);
    *newcomm = MPI_COMM_NULL;
    return raise_on(comm, rc);
  }
  return start_creation(comm, "MPI_Comm_idup", newcomm, request,
                        [&](rangecomm::Comm* out, rangecomm::Request* r) {
                          // The number that names the copy is agreed on comm itself, where MPI
                          // orders it among comm's collectives: idups of different parents with
                          // the same members, started in different orders, stay apart.
                          return rangecomm::Icomm_create_numbered(
                              world_range(), members.data(), static_cast<int>(members.size()),
                              [comm](const std::uint32_t* mine, std::uint32_t* agreed,
                                     MPI_Request* req) {
                                return MPI_Iallreduce(mine, agreed, 4, MPI_UINT32_T, MPI_MAX,
                                                       comm, req);
                              },
                              out, r);
                        });
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

extern "C" int rc_hand_MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_dup(comm, newcomm);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_dup(comm, MPI_INFO_NULL, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  if (UNLIKELY(rangecomm::Progress_needed())) return rc_blocking_MPI_Comm_dup(comm, newcomm);
  return MPI_Comm_dup(comm, newcomm);
}

extern "C" int rc_hand_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_dup_with_info(comm, info, newcomm);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_dup(comm, info, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  if (UNLIKELY(rangecomm::Progress_needed()))
    return rc_blocking_MPI_Comm_dup_with_info(comm, info, newcomm);
  return MPI_Comm_dup_with_info(comm, info, newcomm);
}

extern "C" int rc_hand_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_split(comm, color, key, newcomm);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_split(comm, color, key, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  if (UNLIKELY(rangecomm::Progress_needed()))
    return rc_blocking_MPI_Comm_split(comm, color, key, newcomm);
  return MPI_Comm_split(comm, color, key, newcomm);
}

extern "C" int rc_hand_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                           MPI_Comm* newcomm) {
  // Split types the library cannot compute itself (and any split type of a library
  // communicator, which MPI makes on its fallback): MPI splits, and under the acceleration
  // modes its result is replaced.
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    int rc = rc_fake_MPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return g_accelerate && rc == MPI_SUCCESS ? shadow_replace(newcomm) : rc;
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_split_type(comm, split_type, key, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  int rc = UNLIKELY(rangecomm::Progress_needed())
               ? rc_blocking_MPI_Comm_split_type(comm, split_type, key, info, newcomm)
               : MPI_Comm_split_type(comm, split_type, key, info, newcomm);
  if (UNLIKELY(g_accelerate) && rc == MPI_SUCCESS) {
    Locked locked;
    return shadow_replace(newcomm);
  }
  return rc;
}

// An intercommunicator is never a library one; its merge is MPI's, and the shadow mode's.
extern "C" int rc_hand_MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(intercomm))) {
    Locked locked;
    return rc_fake_MPI_Intercomm_merge(intercomm, high, newcomm);
  }
  int rc = UNLIKELY(rangecomm::Progress_needed())
               ? rc_blocking_MPI_Intercomm_merge(intercomm, high, newcomm)
               : MPI_Intercomm_merge(intercomm, high, newcomm);
  if (UNLIKELY(g_shadow) && rc == MPI_SUCCESS) {
    Locked locked;
    return shadow_replace(newcomm);
  }
  return rc;
}

#if MPI_VERSION >= 4
// MPI-4's creation from a group without a parent: MPI makes it; the shadow mode replaces it.
extern "C" int rc_hand_MPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                                  MPI_Info info, MPI_Errhandler errhandler,
                                                  MPI_Comm* newcomm) {
  int rc = UNLIKELY(rangecomm::Progress_needed())
               ? rc_blocking_MPI_Comm_create_from_group(group, stringtag, info, errhandler,
                                                         newcomm)
               : MPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
  if (UNLIKELY(g_shadow) && rc == MPI_SUCCESS) {
    Locked locked;
    return shadow_replace(newcomm);
  }
  return rc;
}

extern "C" int rc_hand_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                               MPI_Request* request) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_idup_with_info(comm, info, newcomm, request);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_idup(comm, newcomm, request, &made);
    if (rc != MPI_SUCCESS) return rc;
    if (made) {
      FakeComm* d = find_comm(*newcomm);
      if (info == MPI_INFO_NULL) return MPI_SUCCESS;
      if (d->info != MPI_INFO_NULL) MPI_Info_free(&d->info);
      return MPI_Info_dup(info, &d->info);
    }
  }
  return MPI_Comm_idup_with_info(comm, info, newcomm, request);
}
#endif

extern "C" int rc_hand_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_create(comm, group, newcomm);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_create(comm, group, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  if (UNLIKELY(rangecomm::Progress_needed()))
    return rc_blocking_MPI_Comm_create(comm, group, newcomm);
  return MPI_Comm_create(comm, group, newcomm);
}

extern "C" int rc_hand_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                             MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_create_group(comm, group, tag, newcomm);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_create_group(comm, group, tag, newcomm, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  if (UNLIKELY(rangecomm::Progress_needed()))
    return rc_blocking_MPI_Comm_create_group(comm, group, tag, newcomm);
  return MPI_Comm_create_group(comm, group, tag, newcomm);
}

extern "C" int rc_hand_MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    return rc_fake_MPI_Comm_idup(comm, newcomm, request);
  }
  if (UNLIKELY(g_accelerate)) {
    Locked locked;
    bool made = false;
    int rc = accelerated_idup(comm, newcomm, request, &made);
    if (made || rc != MPI_SUCCESS) return rc;
  }
  return MPI_Comm_idup(comm, newcomm, request);
}
