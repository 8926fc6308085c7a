// Communicators' hints (MPI_Comm_set_info / MPI_Comm_get_info) of library communicators, kept
// as the MPI underneath keeps those of its own, so that a program sees the same hints with and
// without the library. MPIs differ here, so the library asks its MPI once, on a copy of
// MPI_COMM_SELF (whose creations are local), how it treats them:
// - a new communicator has MPI's default hints: those of a communicator MPI made for the
//   library and nobody set hints on (a key absent from them is a hint MPI does not know);
// - MPI_Comm_set_info applies the hints MPI knows and ignores the others (both MPIs);
// - MPI_Comm_dup starts with the parent's hints, or with the defaults (MPICH 4.0 does not copy
//   hints set on the parent);
// - MPI_Comm_dup_with_info (and split_type's info) overlays the defaults with the known hints of
//   the info, or with all of them (Open MPI 4.1 keeps hints it does not know);
// - what MPI_Comm_dup, _dup_with_info and _split_type make may have hints that the defaults lack
//   (Open MPI 5.0: ompi_assert_lazy_barrier and ompi_assert_active_poll; not MPI_Comm_idup,
//   _split or _create_group), added where the new communicator lacks them.
// A dup of MPI_COMM_WORLD starts with the world's hints as MPI has them then; asking MPI for
// them (MPI_Comm_get_info makes a new info object) and freeing that copy cost more than the rest
// of an accelerated dup, so the world's hints are read once per change (the generated wrapper of
// MPI_Comm_set_info bumps g_world_info_version, errhandler_cache.h) into a snapshot every dup
// made meanwhile shares.
#include <atomic>
#include <cstring>
#include <vector>

#include "base/errhandler_cache.h"
#include "comms/hints.h"
#include "handles/handles.h"
#include "world/roots.h"

namespace rcshim {

std::atomic<unsigned> g_world_info_version{0};

namespace {

// Under the library's lock, like every caller.
struct Snapshots {
  struct Slot {
    bool known = false;
    unsigned version = 0;
    MPI_Info current = MPI_INFO_NULL;
  } slots[2];                 // [1]: for dups, where MPI adds hints to the world's (dup_extras)
  std::vector<MPI_Info> all;  // older ones too: communicators may still share them
} g_snapshots;

// What MPI does with hints, asked once (probe_hints()).
struct Behaviour {
  bool known = false;
  MPI_Info defaults = MPI_INFO_NULL;      // MPI's hints of a new communicator
  bool dup_copies = true;                 // a dup starts with its parent's hints
  bool keeps_unknown = false;             // creation with info keeps hints MPI does not know
  MPI_Info dup_extras = MPI_INFO_NULL;    // hints a dup has beyond the defaults (or none)
  MPI_Info dup_defaults = MPI_INFO_NULL;  // the defaults with those (when there are any)
} g_mpi;

const char kProbeKey[] = "rangecomm_probe_hint";

bool has_key(MPI_Info info, const char* key, const char* value = nullptr) {
  char found[64] = "";
  int flag = 0;
  MPI_Info_get(info, key, static_cast<int>(sizeof found) - 1, found, &flag);
  return flag != 0 && (value == nullptr || std::strcmp(found, value) == 0);
}

// Sets in `to` each hint of `from` whose key `keep` accepts.
template <class Keep>
void copy_hints_if(MPI_Info to, MPI_Info from, Keep keep) {
  int n = 0;
  MPI_Info_get_nkeys(from, &n);
  char key[MPI_MAX_INFO_KEY + 1];
  std::vector<char> value;
  for (int i = 0; i < n; ++i) {
    int length = 0, flag = 0;
    if (MPI_Info_get_nthkey(from, i, key) != MPI_SUCCESS || !keep(key)) continue;
    MPI_Info_get_valuelen(from, key, &length, &flag);
    value.assign(static_cast<size_t>(length) + 1, '\0');
    MPI_Info_get(from, key, length, value.data(), &flag);
    if (flag) MPI_Info_set(to, key, value.data());
  }
}

// Sets in `to` each hint of `from` that `to` lacks and `skip` (if any) does not have.
void add_absent(MPI_Info to, MPI_Info from, MPI_Info skip = MPI_INFO_NULL) {
  copy_hints_if(to, from, [&](const char* key) {
    return !has_key(to, key) && (skip == MPI_INFO_NULL || !has_key(skip, key));
  });
}

// Keeps the hints of `made` (the probe's dup) that neither the defaults nor the probe gave it.
void note_dup_extras(MPI_Info made) {
  MPI_Info extras = MPI_INFO_NULL;
  MPI_Info_create(&extras);
  add_absent(extras, made, g_mpi.defaults);
  if (has_key(extras, kProbeKey)) MPI_Info_delete(extras, kProbeKey);
  int n = 0;
  MPI_Info_get_nkeys(extras, &n);
  if (n == 0) {
    MPI_Info_free(&extras);
    return;
  }
  g_mpi.dup_extras = extras;
  MPI_Info_dup(g_mpi.defaults, &g_mpi.dup_defaults);
  add_absent(g_mpi.dup_defaults, extras);
}

// A hint MPI knows whose default is "false", to see whether a dup copies a set hint.
bool boolean_hint(MPI_Info defaults, char* key) {
  int n = 0;
  MPI_Info_get_nkeys(defaults, &n);
  for (int i = 0; i < n; ++i)
    if (MPI_Info_get_nthkey(defaults, i, key) == MPI_SUCCESS && has_key(defaults, key, "false"))
      return true;
  return false;
}

}  // namespace

void probe_hints() {
  if (g_mpi.known) return;
  g_mpi.known = true;
  if (MPI_Comm_get_info(fallback_channel(), &g_mpi.defaults) != MPI_SUCCESS)
    MPI_Info_create(&g_mpi.defaults);
  // The probes' parent is a copy of MPI_COMM_SELF made by create_group and freed at the end: on
  // Open MPI 4.1 a dup registers libnbc's progress function until its parent is freed
  // (shim-design.md, "Copies without libnbc"), and MPI_COMM_SELF is never freed.
  MPI_Group self_group = MPI_GROUP_NULL;
  MPI_Comm base = MPI_COMM_NULL;
  MPI_Comm_group(MPI_COMM_SELF, &self_group);
  int rc = MPI_Comm_create_group(MPI_COMM_SELF, self_group, 0, &base);
  MPI_Group_free(&self_group);
  if (rc != MPI_SUCCESS) return;
  MPI_Info given = MPI_INFO_NULL, got = MPI_INFO_NULL;
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Info_create(&given);
  MPI_Info_set(given, kProbeKey, "1");
  if (MPI_Comm_dup_with_info(base, given, &copy) == MPI_SUCCESS) {
    if (MPI_Comm_get_info(copy, &got) == MPI_SUCCESS) {
      g_mpi.keeps_unknown = has_key(got, kProbeKey);
      note_dup_extras(got);
      MPI_Info_free(&got);
    }
    MPI_Comm_free(&copy);
  }
  MPI_Info_free(&given);
  char key[MPI_MAX_INFO_KEY + 1];
  if (boolean_hint(g_mpi.defaults, key)) {
    MPI_Info_create(&given);
    MPI_Info_set(given, key, "true");
    MPI_Comm_set_info(base, given);
    MPI_Info_free(&given);
    if (MPI_Comm_dup(base, &copy) == MPI_SUCCESS) {
      if (MPI_Comm_get_info(copy, &got) == MPI_SUCCESS) {
        g_mpi.dup_copies = has_key(got, key, "true");
        MPI_Info_free(&got);
      }
      MPI_Comm_free(&copy);
    }
  }
  MPI_Comm_free(&base);
}

namespace {

MPI_Info defaults() {
  probe_hints();
  return g_mpi.defaults;
}

bool known_hint(const char* key) {
  int length = 0, flag = 0;
  MPI_Info_get_valuelen(defaults(), key, &length, &flag);
  return flag != 0;
}

// c's hints overlaid with those of `given` that pass: known ones, or all when `all`.
int overlay(FakeComm& c, MPI_Info given, bool all) {
  MPI_Info next = MPI_INFO_NULL;
  if (int rc = hints_in_use(c, &next)) return rc;
  copy_hints_if(next, given, [all](const char* key) { return all || known_hint(key); });
  set_hints(c, next);
  return MPI_SUCCESS;
}

}  // namespace

void set_hints(FakeComm& c, MPI_Info own) {
  if (c.info != MPI_INFO_NULL && !c.info_shared) MPI_Info_free(&c.info);
  c.info = own;
  c.info_shared = false;
}

int hints_in_use(const FakeComm& c, MPI_Info* out) {
  return MPI_Info_dup(c.info != MPI_INFO_NULL ? c.info : defaults(), out);
}

int apply_hints(FakeComm& c, MPI_Info given) { return overlay(c, given, false); }

int create_with_hints(FakeComm& c, MPI_Info given) {
  set_hints(c, MPI_INFO_NULL);
  probe_hints();
  return overlay(c, given, g_mpi.keeps_unknown);
}

void add_dup_hints(FakeComm& c) {
  probe_hints();
  if (g_mpi.dup_extras == MPI_INFO_NULL || c.info == g_mpi.dup_defaults) return;
  if (c.info == MPI_INFO_NULL) {  // the defaults: those with the extras, shared
    c.info = g_mpi.dup_defaults;
    c.info_shared = true;
    return;
  }
  MPI_Info next = MPI_INFO_NULL;
  if (hints_in_use(c, &next) != MPI_SUCCESS) return;
  add_absent(next, g_mpi.dup_extras);
  set_hints(c, next);
}

int take_hints(MPI_Comm real, FakeComm& to) {
  MPI_Info copy = MPI_INFO_NULL;
  int rc = MPI_Comm_get_info(real, &copy);
  set_hints(to, copy);
  return rc;
}

int copy_hints(const FakeComm& from, FakeComm& to) {
  probe_hints();
  if (!g_mpi.dup_copies || from.info_shared || from.info == MPI_INFO_NULL) {
    set_hints(to, MPI_INFO_NULL);
    if (!g_mpi.dup_copies) return MPI_SUCCESS;
    to.info = from.info;
    to.info_shared = from.info_shared;
    return MPI_SUCCESS;
  }
  MPI_Info copy = MPI_INFO_NULL;
  int rc = MPI_Info_dup(from.info, &copy);
  set_hints(to, copy);
  return rc;
}

int inherit_hints(MPI_Comm real, FakeComm& to, bool dup) {
  probe_hints();
  if (!g_mpi.dup_copies) {
    set_hints(to, MPI_INFO_NULL);
    if (dup) add_dup_hints(to);
    return MPI_SUCCESS;
  }
  if (real != MPI_COMM_WORLD) {
    int rc = take_hints(real, to);
    if (dup) add_dup_hints(to);
    return rc;
  }
  Snapshots::Slot& slot = g_snapshots.slots[dup && g_mpi.dup_extras != MPI_INFO_NULL];
  const unsigned version = g_world_info_version.load(std::memory_order_acquire);
  if (!slot.known || slot.version != version) {
    MPI_Info now = MPI_INFO_NULL;
    if (int rc = MPI_Comm_get_info(real, &now)) return rc;
    if (dup && g_mpi.dup_extras != MPI_INFO_NULL) add_absent(now, g_mpi.dup_extras);
    g_snapshots.all.push_back(now);
    slot.current = now;
    slot.version = version;  // a read racing with a change keeps the older version
    slot.known = true;
  }
  set_hints(to, MPI_INFO_NULL);
  to.info = slot.current;
  to.info_shared = true;
  return MPI_SUCCESS;
}

void free_hint_snapshots() {
  for (MPI_Info& info : g_snapshots.all) MPI_Info_free(&info);
  g_snapshots = Snapshots();
  for (MPI_Info* info : {&g_mpi.defaults, &g_mpi.dup_extras, &g_mpi.dup_defaults})
    if (*info != MPI_INFO_NULL) MPI_Info_free(info);
  g_mpi = Behaviour();
}

}  // namespace rcshim
