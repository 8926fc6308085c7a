// Where ranges live (roots.h): MPI_COMM_WORLD's range, made inside MPI_Init (a collective
// moment), the shim's private channels, and how a real communicator maps into the world's range.
// Real communicators other than MPI_COMM_WORLD are never attached (no cost at their creation):
// their ranges are ranges of MPI_COMM_WORLD's, found through the map from their ranks to world
// ranks (docs/shim-design.md), and a mirror when they are the parent of a creation.
#include <algorithm>
#include <utility>

#include "handles/errors.h"
#include "handles/handles.h"
#include "rangecomm/embedding.hpp"
#include "requests/requests.h"
#include "world/roots.h"

namespace rcshim {

// Rank r of a real communicator is world rank first + r * stride.
struct AffineMap {
  bool affine = false;
  int first = 0, stride = 1, size = 0, rank = MPI_UNDEFINED;
  std::vector<int> world;  // every rank's world rank, kept when not affine
  rangecomm::Comm mirror;  // the communicator as the library's, once agreed (agree_mirror)
};

namespace {

struct World {
  bool thread_multiple = false;
  rangecomm::Comm range;
  RangeParent parent;  // MPI_COMM_WORLD as a parent (its range's own), while range is not null
  MPI_Comm fallback = MPI_COMM_NULL, groups = MPI_COMM_NULL;
  int map_keyval = MPI_KEYVAL_INVALID;  // caches a real communicator's map on it
} g_world;

// The maps holding a mirror: MPI_Finalize may free the program's leftover communicators after
// the library has shut down, so shut_down lets go of the mirrors first.
std::vector<AffineMap*> g_mirrored;

int delete_map(MPI_Comm, int, void* value, void*) {
  auto* m = static_cast<AffineMap*>(value);
  if (!m->mirror.is_null()) {  // MPI_Comm_free of a real communicator takes no lock itself
    Locked locked;
    g_mirrored.erase(std::find(g_mirrored.begin(), g_mirrored.end(), m));
    m->mirror = rangecomm::Comm();
  }
  delete m;
  return MPI_SUCCESS;
}

// A private copy of MPI_COMM_WORLD. Made with MPI_Comm_create_group, not MPI_Comm_dup: on Open
// MPI 4 a dup would make every later progress call of the program, also on real communicators,
// poll libnbc (core/src/wire/channel.cpp says why).
MPI_Comm private_copy(const char* name, int tag) {
  MPI_Group world = MPI_GROUP_NULL;
  if (MPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS) return MPI_COMM_NULL;
  MPI_Comm c = MPI_COMM_NULL;
  int rc = MPI_Comm_create_group(MPI_COMM_WORLD, world, tag, &c);
  MPI_Group_free(&world);
  if (rc != MPI_SUCCESS) return MPI_COMM_NULL;
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_name(c, name);
  return c;
}

// O(size) once per real communicator, then cached on it: its ranks in MPI_COMM_WORLD.
int compute_map(MPI_Comm comm, AffineMap* m) {
  MPI_Group group, world;
  int rc = MPI_Comm_group(comm, &group);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(group, &m->size);
  MPI_Group_rank(group, &m->rank);
  std::vector<int> ranks(m->size), in_world(m->size);
  for (int i = 0; i < m->size; ++i) ranks[i] = i;
  rc = MPI_Group_translate_ranks(group, m->size, ranks.data(), world, in_world.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  if (rc != MPI_SUCCESS) return rc;
  m->first = in_world[0];
  m->stride = m->size > 1 ? in_world[1] - in_world[0] : 1;
  m->affine = m->first != MPI_UNDEFINED && m->stride >= 1;
  for (int i = 1; i < m->size && m->affine; ++i)
    m->affine = in_world[i] != MPI_UNDEFINED && in_world[i] == m->first + i * m->stride;
  if (!m->affine) {
    if (std::find(in_world.begin(), in_world.end(), MPI_UNDEFINED) != in_world.end())
      return MPI_ERR_GROUP;  // not a subset of the world (a spawned process): no map
    m->world = std::move(in_world);
  }
  return MPI_SUCCESS;
}

int real_parent(MPI_Comm comm, const char* fn, RangeParent* out) {
  if (g_world.range.is_null())
    return raise_error(comm, MPI_ERR_OTHER,
                       "%s: MPI was not initialised through librangecomm's MPI_Init or "
                       "MPI_Init_thread, so there is no range of MPI_COMM_WORLD",
                       fn);
  int inter = 0;  // (MPI_COMM_WORLD, the common parent, is known to be an intracommunicator)
  if (comm != MPI_COMM_WORLD) {
    if (int rc = MPI_Comm_test_inter(comm, &inter)) return rc;  // MPI raised it already
  }
  if (inter) return raise_error(comm, MPI_ERR_COMM, "%s: an intercommunicator has no ranges", fn);
  if (!mapped_parent(comm, out))
    return raise_error(comm, MPI_ERR_COMM,
                       "%s: this communicator has processes outside MPI_COMM_WORLD, so its "
                       "ranges cannot be made locally",
                       fn);
  return MPI_SUCCESS;
}

}  // namespace

const rangecomm::Comm& world_range() { return g_world.range; }
bool mpi_thread_multiple() { return g_world.thread_multiple; }
MPI_Comm fallback_channel() { return g_world.fallback; }
MPI_Comm group_channel() { return g_world.groups; }

int parent_of(MPI_Comm comm, const char* fn, RangeParent* out) {
  if (comm == MPI_COMM_WORLD && g_world.parent.range != nullptr) {  // the common parent
    *out = g_world.parent;
    return MPI_SUCCESS;
  }
  if (comm == MPI_COMM_NULL)
    return raise_error(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: MPI_COMM_NULL", fn);
  if (!rc_is_fake_comm(comm)) return real_parent(comm, fn, out);
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, fn, &c)) return rc;
  if (c->range.is_null())
    return raise_error(comm, MPI_ERR_COMM, "%s: the MPI_Comm_idup making it has not completed", fn);
  out->range = out->self = &c->range;
  out->first = 0, out->stride = 1, out->size = c->range.size(), out->rank = c->range.rank();
  return MPI_SUCCESS;
}

bool mapped_parent(MPI_Comm real, RangeParent* out) {
  if (g_world.range.is_null() || real == MPI_COMM_NULL) return false;
  out->range = &g_world.range;
  out->self = nullptr;
  out->map = nullptr;
  if (real == MPI_COMM_WORLD) {
    *out = g_world.parent;
    return true;
  }
  int inter = 0;
  if (MPI_Comm_test_inter(real, &inter) != MPI_SUCCESS || inter) return false;
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(real, g_world.map_keyval, &value, &found);
  auto* m = static_cast<AffineMap*>(value);
  if (!found) {
    m = new AffineMap;
    if (compute_map(real, m) != MPI_SUCCESS) {
      delete m;
      return false;
    }
    MPI_Comm_set_attr(real, g_world.map_keyval, m);
  }
  out->first = m->first, out->stride = m->stride, out->size = m->size, out->rank = m->rank;
  out->world = m->affine ? nullptr : &m->world;
  out->map = m;
  if (!m->mirror.is_null()) out->self = &m->mirror;
  return true;
}

int agree_mirror(MPI_Comm real, RangeParent* p, bool* low) {
  if (low != nullptr) *low = false;
  if (p->self != nullptr) return MPI_SUCCESS;
  // The all-reduction also tells whether any member's handle table is nearly full.
  std::uint32_t any_low = 0;
  std::vector<int> members(static_cast<size_t>(p->size));
  for (int r = 0; r < p->size; ++r) members[r] = p->in_range(r);
  rangecomm::Comm mirror;
  rangecomm::Request request;
  int rc = rangecomm::Icomm_create_numbered(
      g_world.range, members.data(), p->size,
      // Blocking, with the request left null: on Open MPI 4.1 a nonblocking collective on a
      // communicator keeps libnbc's progress function polled by every later MPI call until
      // that communicator is freed, and MPI_COMM_SELF never is (shim-design.md, "Copies
      // without libnbc"). Without the library lock, as every blocking collective of MPI in the
      // shim: with threads, the other members may reach this all-reduction only after this
      // process's other threads got into the library (the creation it belongs to is not yet
      // visible to them).
      [real, &any_low](const std::uint32_t* mine, std::uint32_t* agreed, MPI_Request* req) {
        *req = MPI_REQUEST_NULL;
        std::uint32_t in[5] = {mine[0], mine[1], mine[2], mine[3], comm_handles_low()};
        std::uint32_t out[5];
        int rc = MPI_SUCCESS;
        {
          Unlocked unlocked;
          rc = MPI_Allreduce(in, out, 5, MPI_UINT32_T, MPI_MAX, real);
        }
        std::copy(out, out + 4, agreed);
        any_low = out[4];
        return rc;
      },
      &mirror, &request);
  if (rc == MPI_SUCCESS) rc = rangecomm::Wait(&request, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return rc;
  p->map->mirror = std::move(mirror);
  g_mirrored.push_back(p->map);
  p->self = &p->map->mirror;
  if (low != nullptr) *low = any_low != 0;
  return MPI_SUCCESS;
}

int split_parent(MPI_Comm comm, const RangeParent& p, int first, int last, int stride, int levels,
                 rangecomm::Comm* out) {
  if (stride < 1) return raise_error(comm, MPI_ERR_ARG, "range: stride %d is below 1", stride);
  if (first > last)
    return raise_error(comm, MPI_ERR_ARG, "range: first %d is above last %d", first, last);
  if (first < 0 || last >= p.size)
    return raise_error(comm, MPI_ERR_RANK, "range: %d..%d is outside the ranks 0..%d", first, last,
                       p.size - 1);
  if (!p.affine()) {  // an irregular real parent: the range's members are a general group
    std::vector<int> members;
    for (int r = first; r <= last; r += stride) members.push_back(p.in_range(r));
    int rc = rangecomm::Group_Comm_below(*p.range, members.data(), static_cast<int>(members.size()),
                                         levels, out);
    return result(comm, rc);
  }
  int rc = rangecomm::Split_Comm_below(*p.range, p.first + first * p.stride,
                                       p.first + last * p.stride, stride * p.stride, levels, out);
  return result(comm, rc);
}

int attach_roots(bool thread_multiple) {
  g_world.thread_multiple = thread_multiple;
  int rc = rangecomm::Create_Comm(MPI_COMM_WORLD, &g_world.range);
  if (rc != MPI_SUCCESS) return rc;
  RangeParent& world = g_world.parent;
  world.range = world.self = &g_world.range;
  world.size = g_world.range.size();
  world.rank = g_world.range.rank();
  g_world.fallback = private_copy("rangecomm fallback channel", 1);
  g_world.groups = private_copy("rangecomm group channel", 2);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_map, &g_world.map_keyval, nullptr);
  return MPI_SUCCESS;
}

void detach_roots() {
  for (AffineMap* m : g_mirrored) m->mirror = rangecomm::Comm();
  g_mirrored.clear();
  g_world.parent = RangeParent();
  g_world.range = rangecomm::Comm();
  if (g_world.fallback != MPI_COMM_NULL) MPI_Comm_free(&g_world.fallback);
  if (g_world.groups != MPI_COMM_NULL) MPI_Comm_free(&g_world.groups);
  if (g_world.map_keyval != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&g_world.map_keyval);
}

}  // namespace rcshim
