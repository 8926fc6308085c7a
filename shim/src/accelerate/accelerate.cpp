// RANGECOMM_MODE=accelerate: communicators an unmodified program makes from real
// intracommunicators of MPI_COMM_WORLD's processes (the world, its dups, any split or merge)
// become library communicators, so they cost no MPI context id and, mostly, no message. Each
// member makes its communicator alone, its identity derived from its parent's and how many
// identical creations came before on that parent (docs/tag-layout.md): MPI has the program
// order the collective calls on one communicator alike at every member (per thread too).
// - The parent's identity: the world has one; another real communicator gets a mirror, an
//   identity its members agree on in one all-reduction over it, at its first creation
//   collective over it (agree_mirror), and keeps it until MPI frees it.
// - MPI_Comm_dup(_with_info), MPI_Comm_create, MPI_Comm_create_group, MPI_Comm_idup: no
//   message to make them, then one barrier (nonblocking for idup) that keeps MPI's order
//   around the call (keep_order). Create_group and idup of a real parent without a mirror
//   agree on a number: one all-reduction over the group or the parent. MPI_Comm_split and
//   MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): one exchange of colours and keys (host names).
//   The results are ranges, or general groups when their members are not evenly spaced.
// Other creation calls, other split types and parents that do not map into the world stay with
// MPI. Without the variable (or RANGECOMM_MODE=off) these hooks cost the real call one load.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "accelerate/report.h"
#include "base/modes.h"
#include "comms/creation.h"
#include "comms/hints.h"
#include "comms/split.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "rangecomm/collectives.hpp"
#include "rangecomm/embedding.hpp"
#include "requests/requests.h"
#include "world/roots.h"

namespace rcshim {

namespace {

// The exchanges run as the program's own collectives on the parent would, under the progress
// rule (rc_blocking_*: range operations still pending keep moving while it waits), and without
// the library lock: MPI may block here until other processes' threads arrive.
int allgather_ints(MPI_Comm parent, int* mine, int n, std::vector<int>* all) {
  Unlocked unlocked;
  if (rangecomm::Progress_needed())
    return rc_blocking_MPI_Allgather(mine, n, MPI_INT, all->data(), n, MPI_INT, parent);
  return MPI_Allgather(mine, n, MPI_INT, all->data(), n, MPI_INT, parent);
}

// Why a real communicator has no place in the world's range.
Why unmapped(MPI_Comm comm) {
  int inter = 0;
  return MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter ? Why::intercomm
                                                                   : Why::outside_world;
}

// This process's communicator of a creation collective over the real parent `comm` (dup,
// split, create): the parent ranks plan->ranks, or all of them in order when plan is null (as
// make_members makes that range), derived from the parent's own identity (the world's, or its
// mirror's, agreed at its first such creation). MPI_COMM_NULL for a non-member. When that
// first agreement tells that some member's handle table is nearly full, *low is set and nothing
// is made: every member then leaves this creation to MPI.
int make_from(MPI_Comm comm, RangeParent& p, const SplitPlan* plan, MPI_Comm* newcomm, bool* low) {
  if (int rc = agree_mirror(comm, &p, low)) return raise_on(comm, rc);
  if (*low) return MPI_SUCCESS;
  rangecomm::Comm mine;
  int rc = plan != nullptr
               ? make_members(*p.self, *plan, kCollectiveLevel, &mine)
               : rangecomm::Split_Comm_below(*p.self, 0, p.size - 1, 1, kCollectiveLevel, &mine);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  *newcomm = MPI_COMM_NULL;
  return plan == nullptr || plan->member
             ? new_comm(std::move(mine), inherited_errhandler(comm), newcomm, comm)
             : MPI_SUCCESS;
}

// A dup keeps the parent's Cartesian, graph or distributed-graph topology, which library
// communicators do not have: MPI makes those copies.
bool has_topology(MPI_Comm comm) {
  int kind = MPI_UNDEFINED;
  return comm != MPI_COMM_WORLD && MPI_Topo_test(comm, &kind) == MPI_SUCCESS &&
         kind != MPI_UNDEFINED;
}

// MPI_Comm_dup(_with_info) of a real communicator; `made` is false when MPI must do it.
int accelerated_dup(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, bool* made, Why* why) {
  RangeParent p;
  if (has_topology(comm)) {
    *made = false;
    *why = Why::topology;
    return MPI_SUCCESS;
  }
  if (!(*made = mapped_parent(comm, &p))) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  bool low = false;
  if (int rc = make_from(comm, p, nullptr, newcomm, &low)) return rc;
  if (low) {
    *made = false;
    *why = Why::handle_table;
    return MPI_SUCCESS;
  }
  FakeComm* d = find_comm(*newcomm);
  if (info != MPI_INFO_NULL) {
    create_with_hints(*d, info);
    add_dup_hints(*d);
  } else {
    inherit_hints(comm, *d, /*dup=*/true);
  }
  int rc = copy_real_attributes(comm, *d);
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  delete_all_attributes(*newcomm, *d);
  release_comm(*newcomm);
  *newcomm = MPI_COMM_NULL;
  return raise_on(comm, rc);
}

// The groups of a split whose entries (comms/split.h, kSplitEntry) every process has; all of them
// see alike whether some process's handle table is nearly full.
int split_by_entries(MPI_Comm comm, RangeParent& p, const std::vector<int>& entries,
                     MPI_Comm* newcomm, bool* made, Why* why) {
  // A negative colour is an error MPI reports; every process sees it and lets MPI split.
  for (int r = 0; r < p.size; ++r) {
    const int color = entries[kSplitEntry * static_cast<std::size_t>(r)];
    if (color < 0 && color != MPI_UNDEFINED) {
      *why = Why::mpi_checks;
      return MPI_SUCCESS;
    }
  }
  bool low = any_table_low(entries);
  int rc = MPI_SUCCESS;
  if (!low) {
    SplitPlan plan = plan_split(entries, p.rank);
    rc = make_from(comm, p, &plan, newcomm, &low);
  }
  *made = !low;
  if (low) *why = Why::handle_table;
  return rc;
}

// MPI_Comm_split of a real communicator: one exchange of colours and keys, then each member
// makes its group alone.
int accelerated_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm, bool* made, Why* why) {
  *made = false;
  RangeParent p;
  if (!mapped_parent(comm, &p)) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  std::vector<int> entries(kSplitEntry * static_cast<std::size_t>(p.size));
  int mine[kSplitEntry] = {color, key, comm_handles_low()};
  if (int rc = allgather_ints(comm, mine, kSplitEntry, &entries)) return rc;
  return split_by_entries(comm, p, entries, newcomm, made, why);
}

// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of a real communicator: the processes of one host
// (same MPI_Get_processor_name) are one group, ordered by key; the colour is the lowest parent
// rank on the host. Other split types stay with MPI.
int accelerated_split_type(MPI_Comm comm, int type, int key, MPI_Comm* newcomm, bool* made,
                           Why* why) {
  *made = false;
  RangeParent p;
  if (type != MPI_COMM_TYPE_SHARED && type != MPI_UNDEFINED) {
    *why = Why::split_type;
    return MPI_SUCCESS;
  }
  if (!mapped_parent(comm, &p)) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  // Every process learns every host name and key (an MPI_UNDEFINED type takes no part), and
  // whether any handle table is nearly full.
  const int names = MPI_MAX_PROCESSOR_NAME;
  const int width = names + 3;  // name, then the flag, the key and the table's state
  std::vector<int> mine(width, 0), all(static_cast<size_t>(width) * p.size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  for (int i = 0; i < len; ++i) mine[i] = static_cast<unsigned char>(name[i]);
  mine[names] = type == MPI_UNDEFINED;
  mine[names + 1] = key;
  mine[names + 2] = comm_handles_low();
  if (int rc = allgather_ints(comm, mine.data(), width, &all)) return rc;
  std::vector<int> entries(kSplitEntry * static_cast<std::size_t>(p.size));
  for (int r = 0; r < p.size; ++r) {
    const int* row = &all[static_cast<size_t>(r) * width];
    int color = MPI_UNDEFINED;
    for (int q = 0; q <= r && !row[names]; ++q)
      if (std::equal(row, row + names, &all[static_cast<size_t>(q) * width])) {
        color = q;
        break;
      }
    int* entry = &entries[kSplitEntry * static_cast<std::size_t>(r)];
    entry[0] = color;
    entry[1] = row[names + 1];
    entry[2] = row[names + 2];
  }
  return split_by_entries(comm, p, entries, newcomm, made, why);
}

// The parent's ranks of group's members, or false when group is not a subset of the parent.
bool ranks_in_parent(MPI_Comm comm, MPI_Group group, std::vector<int>* ranks) {
  int n = 0;
  if (group == MPI_GROUP_NULL || MPI_Group_size(group, &n) != MPI_SUCCESS) return false;
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

// MPI_Comm_create of a real communicator (each process may pass its own group, MPI-2.2): each
// group's members make it alone. A group that is not a subset of the parent is this process's
// error, reported here as MPI reports it, without a message to anyone.
int accelerated_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm, bool* made, Why* why) {
  RangeParent p;
  if (!(*made = mapped_parent(comm, &p))) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  SplitPlan plan;
  if (!ranks_in_parent(comm, group, &plan.ranks))
    return raise_error(comm, MPI_ERR_GROUP,
                       "MPI_Comm_create: the group is not a group of the communicator's "
                       "processes");
  plan.member = std::find(plan.ranks.begin(), plan.ranks.end(), p.rank) != plan.ranks.end();
  bool low = false;
  int rc = make_from(comm, p, &plan, newcomm, &low);
  if (low) {
    *made = false;
    *why = Why::handle_table;
  }
  return rc;
}

// MPI_Comm_create_group of a real communicator, collective over the group only: from a parent
// with an identity (the world, or a real communicator that has its mirror) each member makes it
// alone, as the library makes groups of its own communicators; MPI has the program tell
// concurrent creations of one parent and group apart by their tags. From a real parent without
// one the members agree on a number that names the creation (one all-reduction over the
// group): groups of different such parents reach the library as groups of the world. A group
// that is not a subset, a caller outside it or a negative tag are left to MPI, which reports
// them.
int accelerated_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm, bool* made,
                             Why* why) {
  *made = false;
  RangeParent p;
  std::vector<int> ranks;
  if (!mapped_parent(comm, &p)) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  if (tag < 0 || !ranks_in_parent(comm, group, &ranks) ||
      std::find(ranks.begin(), ranks.end(), p.rank) == ranks.end()) {
    *why = Why::mpi_checks;
    return MPI_SUCCESS;
  }
  rangecomm::Comm result;
  int rc = MPI_SUCCESS;
  if (p.self != nullptr) {
    rc = rangecomm::Comm_create_group(*p.self, ranks.data(), static_cast<int>(ranks.size()), tag,
                                      &result);
  } else {
    std::vector<int> members(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) members[i] = p.in_range(ranks[i]);
    rangecomm::Request request;
    rc = rangecomm::Icomm_create_agreed(world_range(), members.data(),
                                        static_cast<int>(members.size()), tag, &result, &request);
    if (rc == MPI_SUCCESS) rc = rangecomm::Wait(&request, MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  *made = true;
  return new_comm(std::move(result), inherited_errhandler(comm), newcomm, comm);
}

// *newcomm, an intracommunicator MPI has just made (a split of a type the library cannot
// compute, under both modes; a merge of an intercommunicator, under shadow), becomes a library
// communicator of the same processes in the same order, and MPI's is freed. Its identity comes
// from a number its members agree on over MPI's (agree_mirror). It stays MPI's when it is an
// intercommunicator or has processes outside the world.
int shadow_replace(MPI_Comm* newcomm, bool* replaced) {
  *replaced = false;
  MPI_Comm real = *newcomm;
  int inter = 0;
  RangeParent p;
  if (real == MPI_COMM_NULL || MPI_Comm_test_inter(real, &inter) != MPI_SUCCESS || inter ||
      !mapped_parent(real, &p))
    return MPI_SUCCESS;
  MPI_Comm library = MPI_COMM_NULL;
  bool low = false;
  if (int rc = make_from(real, p, nullptr, &library, &low)) return rc;
  if (low) return MPI_SUCCESS;  // a member's table is nearly full: MPI's stays
  take_hints(real, *find_comm(library));
  *newcomm = library;
  *replaced = true;
  Unlocked unlocked;
  return MPI_Comm_free(&real);
}

// MPI_Comm_idup of a real communicator: the handle at once. From a parent with an identity the
// copy is complete at once too (rangecomm::Icomm_dup: its identity comes from the parent's
// collective sequence). Otherwise it is named by a number agreed in one MPI_Iallreduce on the
// parent, where MPI orders it among the parent's collectives: idups of different parents with
// the same members, started in different orders, stay apart.
int accelerated_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request, bool* made, Why* why) {
  RangeParent p;
  if (has_topology(comm)) {
    *made = false;
    *why = Why::topology;
    return MPI_SUCCESS;
  }
  if (!(*made = mapped_parent(comm, &p))) {
    *why = unmapped(comm);
    return MPI_SUCCESS;
  }
  if (int rc = new_pending_comm(inherited_errhandler(comm), newcomm, comm)) return rc;
  FakeComm* d = find_comm(*newcomm);
  inherit_hints(comm, *d, /*dup=*/false);
  if (int rc = copy_real_attributes(comm, *d)) {
    delete_all_attributes(*newcomm, *d);
    release_comm(*newcomm);
    *newcomm = MPI_COMM_NULL;
    return raise_on(comm, rc);
  }
  if (p.self != nullptr)
    return start_creation(comm, "MPI_Comm_idup", newcomm, request,
                          [&](rangecomm::Comm* out, rangecomm::Request* r) {
                            return idup_in_order(*p.self, out, r);
                          });
  std::vector<int> members(static_cast<size_t>(p.size));
  for (int i = 0; i < p.size; ++i) members[i] = p.in_range(i);
  return start_creation(
      comm, "MPI_Comm_idup", newcomm, request, [&](rangecomm::Comm* out, rangecomm::Request* r) {
        return rangecomm::Icomm_create_numbered(
            world_range(), members.data(), static_cast<int>(members.size()),
            [comm](const std::uint32_t* mine, std::uint32_t* agreed, MPI_Request* req) {
              return MPI_Iallreduce(mine, agreed, 4, MPI_UINT32_T, MPI_MAX, comm, req);
            },
            out, r);
      });
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace {
// Under the acceleration modes: a creation MPI calls itself inside one the shim forwarded to it
// stays MPI's (base/modes.h, ForwardedToMpi), as MPI's code expects its own communicator back.
bool left_to_mpi(Why* why) {
  if (!called_by_mpi()) return false;
  *why = Why::inside_mpi;
  return true;
}

// A null result pointer: MPI reports it for its own communicators (the call goes to MPI
// untouched); the library for its own, instead of writing through it.
int null_result(MPI_Comm comm, const char* fn) {
  Locked locked;
#ifdef MPICH_VERSION
  // MPICH checks a creation's result pointer before it looks at the communicator, and raises
  // the error on MPI_COMM_WORLD: a program under MPICH sees it there, so it does here too.
  (void)comm;
  return raise_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: the result argument is a null pointer", fn);
#else
  return raise_error(comm, MPI_ERR_ARG, "%s: the result argument is a null pointer", fn);
#endif
}

// MPI_Comm_dup, MPI_Comm_create and MPI_Comm_create_group synchronise in every MPI: their
// members agree on a context id, so none returns before all have entered the call. Programs
// rely on that order: a message a member sends on the parent after the call never reaches a
// probe or receive another member finished before entering it (DOLFINx runs its NBX edge
// discovery again on the same communicator and tag right after a dup;
// tests/shim/creation_order.c). The library makes these communicators without a message, so
// one barrier restores the order: over the new communicator for a dup and a create_group (its
// members are the callers), over the parent for a create (every parent member calls it), the
// library's on a library communicator and MPI's on a real one. The library's own MPIX_ calls
// stay local.
int keep_order(Creation call, MPI_Comm parent, MPI_Comm made) {
  switch (call) {
    case Creation::dup:
    case Creation::dup_with_info:
    case Creation::create_group:
      return made == MPI_COMM_NULL ? MPI_SUCCESS : rangecomm::Barrier(find_comm(made)->range);
    case Creation::create:
      if (rc_is_fake_comm(parent)) return rangecomm::Barrier(find_comm(parent)->range);
      {
        Unlocked unlocked;  // MPI may block here until other processes' threads arrive
        return rangecomm::Progress_needed() ? rc_blocking_MPI_Barrier(parent) : MPI_Barrier(parent);
      }
    default:
      return MPI_SUCCESS;
  }
}

// The path of every creation from a parent communicator, each step a callable:
// - library(&made, &why): the creation on a library communicator (made true and why
//   Why::count beforehand; a step that leaves the result to MPI says so and why);
// - accelerated(&made, &why): under the acceleration modes, the creation from a real parent,
//   where the library can make it;
// - mpi(): MPI's own call, under the progress rule (rc_mpi_MPI_X).
// MPI makes the rest; with replace_mpis its result becomes the library's under the acceleration
// modes (split types the library cannot compute). What the library makes keeps MPI's order
// (keep_order). Each outcome is counted for RANGECOMM_REPORT with the reason (report.h).
template <class Library, class Accelerated, class Mpi>
int create_from_parent(Creation call, const char* fn, MPI_Comm comm, MPI_Comm* newcomm,
                       Library library, Accelerated accelerated, Mpi mpi,
                       bool replace_mpis = false) {
  if (UNLIKELY(newcomm == nullptr)) return rc_is_fake_comm(comm) ? null_result(comm, fn) : mpi();
  if (UNLIKELY(rc_is_fake_comm(comm))) {
    Locked locked;
    bool made = true;
    Why why = Why::count;
    int rc = library(&made, &why);
    if (made && rc == MPI_SUCCESS) rc = keep_order(call, comm, *newcomm);
    return reported(call, made, why, rc, newcomm);
  }
  Why why = Why::mode_off;
  const bool accelerating = UNLIKELY(g_accelerate) && !left_to_mpi(&why);
  if (accelerating) {
    Locked locked;
    bool made = false;
    int rc = accelerated(&made, &why);
    if (made && rc == MPI_SUCCESS) rc = keep_order(call, comm, *newcomm);
    if (made || rc != MPI_SUCCESS) return reported(call, true, why, rc, newcomm);
  }
  int rc = MPI_SUCCESS;
  {
    ForwardedToMpi forwarded(accelerating);  // MPI's creations inside it stay MPI's
    rc = mpi();
  }
  bool replaced = false;
  if (replace_mpis && accelerating && rc == MPI_SUCCESS) {
    Locked locked;
    rc = shadow_replace(newcomm, &replaced);
  }
  return reported(call, replaced, why, rc, newcomm);
}

// A creation MPI makes in both modes (no parent, or an intercommunicator's merge), whose result
// becomes the library's under the shadow mode.
template <class Mpi>
int shadowed(Creation call, MPI_Comm* newcomm, Mpi mpi) {
  int rc = mpi();
  bool replaced = false;
  Why why = g_accelerate ? Why::not_parent_call : Why::mode_off;
  if (UNLIKELY(g_shadow) && rc == MPI_SUCCESS && !left_to_mpi(&why)) {
    Locked locked;
    rc = shadow_replace(newcomm, &replaced);
  }
  return reported(call, replaced, why, rc, newcomm);
}

}  // namespace

extern "C" int rc_hand_MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::dup, "MPI_Comm_dup", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_dup(comm, newcomm); },
      [&](bool* made, Why* why) {
        return accelerated_dup(comm, MPI_INFO_NULL, newcomm, made, why);
      },
      [&] { return rc_mpi_MPI_Comm_dup(comm, newcomm); });
}

extern "C" int rc_hand_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::dup_with_info, "MPI_Comm_dup_with_info", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_dup_with_info(comm, info, newcomm); },
      [&](bool* made, Why* why) { return accelerated_dup(comm, info, newcomm, made, why); },
      [&] { return rc_mpi_MPI_Comm_dup_with_info(comm, info, newcomm); });
}

extern "C" int rc_hand_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::split, "MPI_Comm_split", comm, newcomm,
      [&](bool* made, Why* why) {
        // A library communicator's split is MPI's when a member's handle table is nearly full.
        int rc = rc_fake_MPI_Comm_split(comm, color, key, newcomm);
        *made = rc != MPI_SUCCESS || rc_is_fake_comm(*newcomm);
        *why = Why::handle_table;
        return rc;
      },
      [&](bool* made, Why* why) { return accelerated_split(comm, color, key, newcomm, made, why); },
      [&] { return rc_mpi_MPI_Comm_split(comm, color, key, newcomm); });
}

// Split types the library cannot compute itself (and any split type of a library communicator,
// which MPI makes on its fallback): MPI splits, and under the acceleration modes its result is
// replaced. MPICH's split types may call MPI's creations (ForwardedToMpi).
extern "C" int rc_hand_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                           MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::split_type, "MPI_Comm_split_type", comm, newcomm,
      [&](bool* made, Why* why) {
        int rc = rc_fake_MPI_Comm_split_type(comm, split_type, key, info, newcomm);
        *made = false;
        *why = Why::split_type;
        if (g_accelerate && rc == MPI_SUCCESS) rc = shadow_replace(newcomm, made);
        return rc;
      },
      [&](bool* made, Why* why) {
        int rc = accelerated_split_type(comm, split_type, key, newcomm, made, why);
        if (*made && rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
          FakeComm* d = find_comm(*newcomm);
          if (info != MPI_INFO_NULL) rc = create_with_hints(*d, info);
          add_dup_hints(*d);
        }
        return rc;
      },
      [&] { return rc_mpi_MPI_Comm_split_type(comm, split_type, key, info, newcomm); },
      /*replace_mpis=*/true);
}

extern "C" int rc_hand_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::create, "MPI_Comm_create", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_create(comm, group, newcomm); },
      [&](bool* made, Why* why) { return accelerated_create(comm, group, newcomm, made, why); },
      [&] { return rc_mpi_MPI_Comm_create(comm, group, newcomm); });
}

extern "C" int rc_hand_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                             MPI_Comm* newcomm) {
  return create_from_parent(
      Creation::create_group, "MPI_Comm_create_group", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_create_group(comm, group, tag, newcomm); },
      [&](bool* made, Why* why) {
        return accelerated_create_group(comm, group, tag, newcomm, made, why);
      },
      [&] { return rc_mpi_MPI_Comm_create_group(comm, group, tag, newcomm); });
}

extern "C" int rc_hand_MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return create_from_parent(
      Creation::idup, "MPI_Comm_idup", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_idup(comm, newcomm, request); },
      [&](bool* made, Why* why) { return accelerated_idup(comm, newcomm, request, made, why); },
      [&] { return MPI_Comm_idup(comm, newcomm, request); });
}

// An intercommunicator is never a library one; its merge is MPI's, and the shadow mode's.
extern "C" int rc_hand_MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newcomm) {
  if (UNLIKELY(rc_is_fake_comm(intercomm))) {
    Locked locked;
    return reported(Creation::intercomm_merge, false, Why::intercomm,
                    rc_fake_MPI_Intercomm_merge(intercomm, high, newcomm), newcomm);
  }
  return shadowed(Creation::intercomm_merge, newcomm,
                  [&] { return rc_mpi_MPI_Intercomm_merge(intercomm, high, newcomm); });
}

#if MPI_VERSION >= 4
// MPI-4's creation from a group without a parent: MPI makes it; the shadow mode replaces it.
extern "C" int rc_hand_MPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                                  MPI_Info info, MPI_Errhandler errhandler,
                                                  MPI_Comm* newcomm) {
  return shadowed(Creation::create_from_group, newcomm, [&] {
    return rc_mpi_MPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
  });
}

extern "C" int rc_hand_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                               MPI_Request* request) {
  return create_from_parent(
      Creation::idup_with_info, "MPI_Comm_idup_with_info", comm, newcomm,
      [&](bool*, Why*) { return rc_fake_MPI_Comm_idup_with_info(comm, info, newcomm, request); },
      [&](bool* made, Why* why) {
        int rc = accelerated_idup(comm, newcomm, request, made, why);
        if (rc == MPI_SUCCESS && *made && info != MPI_INFO_NULL)
          rc = create_with_hints(*find_comm(*newcomm), info);
        return rc;
      },
      [&] { return MPI_Comm_idup_with_info(comm, info, newcomm, request); });
}
#endif
