// The three calls of rangecomm.h.
#include <algorithm>
#include <atomic>
#include <memory>

#include "accelerate/report.h"
#include "base/errhandler_cache.h"
#include "base/export.h"
#include "comms/creation.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "rangecomm.h"
#include "requests/requests.h"
#include "world/roots.h"

namespace rcshim {

std::atomic<unsigned> g_world_errhandler_version{0};

namespace {
// The world's predefined error handler as of version g_world_errhandler_version (under the
// library's lock, like every caller of inherited_errhandler; errhandler_cache.h).
struct WorldErrhandler {
  bool known = false;
  unsigned version = 0;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
} g_world_eh;
}  // namespace

// The error handler a new communicator made from comm starts with (MPI: the parent's).
MPI_Errhandler inherited_errhandler(MPI_Comm comm) {
  if (rc_is_fake_comm(comm)) {
    FakeComm* c = find_comm(comm);
    return c ? c->errhandler : MPI_ERRORS_ARE_FATAL;
  }
  const bool world = comm == MPI_COMM_WORLD;
  const unsigned version = g_world_errhandler_version.load(std::memory_order_acquire);
  if (world && g_world_eh.known && g_world_eh.version == version) return g_world_eh.eh;
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  if (MPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS) return MPI_ERRORS_ARE_FATAL;
  // The shim keeps the handler alive by deferring the program's frees (error_dispatch.cpp),
  // so the reference MPI just counted is not needed.
  MPI_Errhandler copy = eh;
  MPI_Errhandler_free(&copy);
  if (world) {  // a predefined handler needs no reference to stay valid
    g_world_eh.known = eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN;
    g_world_eh.version = version;
    g_world_eh.eh = eh;
  }
  return eh;
}

// Ranks of group in comm's numbering; false (with the reason raised) when not a subset.
int group_in_comm(MPI_Comm comm, MPI_Group group, const char* fn, std::vector<int>* ranks) {
  MPI_Group comm_group = MPI_GROUP_NULL;
  int rc = rc_is_fake_comm(comm) ? range_group(find_comm(comm)->range, &comm_group)
                                 : MPI_Comm_group(comm, &comm_group);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  int n = 0;
  rc = MPI_Group_size(group, &n);
  if (rc != MPI_SUCCESS) {
    MPI_Group_free(&comm_group);
    return raise_error(comm, MPI_ERR_GROUP, "%s: invalid group", fn);
  }
  std::vector<int> in_group(n);
  for (int i = 0; i < n; ++i) in_group[i] = i;
  ranks->assign(n, MPI_UNDEFINED);
  rc = MPI_Group_translate_ranks(group, n, in_group.data(), comm_group, ranks->data());
  MPI_Group_free(&comm_group);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  for (int i = 0; i < n; ++i)
    if ((*ranks)[i] == MPI_UNDEFINED)
      return raise_error(comm, MPI_ERR_GROUP,
                         "%s: member %d of the group is not a member of the communicator", fn, i);
  return MPI_SUCCESS;
}

// Whether ranks is first, first + stride, ... with stride >= 1.
bool as_range(const std::vector<int>& ranks, int* first, int* last, int* stride) {
  if (ranks.empty()) return false;
  *first = ranks.front();
  *last = ranks.back();
  *stride = ranks.size() > 1 ? ranks[1] - ranks[0] : 1;
  if (*stride < 1) return false;
  for (size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i] != *first + static_cast<int>(i) * *stride) return false;
  return true;
}

namespace {
// Makes *p the parent a local creation derives from: the communicator's own identity when it has
// one (a library communicator, the world, a real communicator's mirror, which the acceleration
// modes give it at its first collective creation), so that creations from different parents
// with the same members stay apart. A real communicator without one makes its ranges and
// groups as ranges and groups of the world (docs/tag-layout.md, "Creations an unmodified
// program makes").
void use_own_identity(RangeParent* p) {
  if (p->self == nullptr || p->self == p->range) return;
  RangeParent own;
  own.range = own.self = p->self;
  own.size = p->size;
  own.rank = p->rank;
  *p = own;
}
}  // namespace

// A range of comm made locally (MPIX_Comm_create_range, range groups of create_group).
int create_range(MPI_Comm comm, int first, int last, int stride, const char* fn,
                 MPI_Comm* newcomm) {
  RangeParent p;
  if (int rc = parent_of(comm, fn, &p)) return rc;
  use_own_identity(&p);
  rangecomm::Comm r = spare_range();
  if (int rc = split_parent(comm, p, first, last, stride, 1, &r)) return rc;
  if (r.is_null()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return new_comm(std::move(r), inherited_errhandler(comm), newcomm, comm);
}

namespace {

int start_group_creation(MPI_Comm comm, RangeParent p, const std::vector<int>& ranks, int tag,
                         MPI_Comm* newcomm, MPI_Request* request) {
  use_own_identity(&p);
  std::vector<int> members(ranks.size());  // as ranks of p's range
  for (size_t i = 0; i < ranks.size(); ++i) members[i] = p.in_range(ranks[i]);
  if (int rc = new_pending_comm(inherited_errhandler(comm), newcomm, comm)) return rc;
  return start_creation(comm, "MPIX_Icomm_create_group", newcomm, request,
                        [&](rangecomm::Comm* out, rangecomm::Request* r) {
                          return rangecomm::Icomm_create_group(*p.range, members.data(),
                                                               static_cast<int>(members.size()),
                                                               tag, out, r);
                        });
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

RC_MPIX_EXPORT int MPIX_Comm_create_range(MPI_Comm comm, int first, int last, int stride,
                                          MPI_Comm* newcomm) {
  Locked locked;
  if (newcomm == nullptr)
    return raise_error(comm, MPI_ERR_ARG, "MPIX_Comm_create_range: newcomm is NULL");
  return reported(Creation::mpix_create_range, true, Why::count,
                  create_range(comm, first, last, stride, "MPIX_Comm_create_range", newcomm),
                  newcomm);
}
RC_MPIX_EXPORT int PMPIX_Comm_create_range(MPI_Comm comm, int first, int last, int stride,
                                           MPI_Comm* newcomm)
    RC_PMPIX_ALIAS(MPIX_Comm_create_range);

RC_MPIX_EXPORT int MPIX_Comm_is_range(MPI_Comm comm, int* flag) {
  if (flag == nullptr) return raise_error(comm, MPI_ERR_ARG, "MPIX_Comm_is_range: flag is NULL");
  *flag = 0;
  if (!rc_is_fake_comm(comm)) return MPI_SUCCESS;
  Locked locked;
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPIX_Comm_is_range", &c)) return rc;
  *flag = 1;
  return MPI_SUCCESS;
}
RC_MPIX_EXPORT int PMPIX_Comm_is_range(MPI_Comm comm, int* flag) RC_PMPIX_ALIAS(MPIX_Comm_is_range);

// Made by each member alone (rangecomm::Icomm_create_group): the request is complete at once.
namespace {
int icomm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm,
                       MPI_Request* request) {
  const char* fn = "MPIX_Icomm_create_group";
  if (newcomm == nullptr || request == nullptr)
    return raise_error(comm, MPI_ERR_ARG, "%s: newcomm or request is NULL", fn);
  if (tag < 0) return raise_error(comm, MPI_ERR_TAG, "%s: tag %d is negative", fn, tag);
  RangeParent p;
  if (int rc = parent_of(comm, fn, &p)) return rc;
  if (group == MPI_GROUP_NULL) return raise_error(comm, MPI_ERR_GROUP, "%s: MPI_GROUP_NULL", fn);
  std::vector<int> ranks;
  if (int rc = group_in_comm(comm, group, fn, &ranks)) return rc;
  int first = 0, last = 0, stride = 1;
  if (ranks.empty()) {
    *newcomm = MPI_COMM_NULL;
    return new_done_request(MPI_COMM_NULL, request);
  }
  if (as_range(ranks, &first, &last, &stride)) {
    if (int rc = create_range(comm, first, last, stride, fn, newcomm)) return rc;
    return new_done_request(MPI_COMM_NULL, request);
  }
  if (std::find(ranks.begin(), ranks.end(), p.rank) == ranks.end()) {
    *newcomm = MPI_COMM_NULL;  // not a member: nothing to take part in
    return new_done_request(MPI_COMM_NULL, request);
  }
  return start_group_creation(comm, p, ranks, tag, newcomm, request);
}
}  // namespace

RC_MPIX_EXPORT int MPIX_Icomm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                           MPI_Comm* newcomm, MPI_Request* request) {
  Locked locked;
  int rc = icomm_create_group(comm, group, tag, newcomm, request);
  return newcomm == nullptr ? rc
                            : reported(Creation::mpix_icreate_group, true, Why::count, rc, newcomm);
}
RC_MPIX_EXPORT int PMPIX_Icomm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                            MPI_Comm* newcomm, MPI_Request* request)
    RC_PMPIX_ALIAS(MPIX_Icomm_create_group);
