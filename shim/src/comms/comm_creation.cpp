// Communicators made from range communicators with the standard calls: dup, idup, split,
// create, create_group give range communicators when the result is a range, and real ones
// (through the fallback communicator) otherwise; free deletes attributes with callbacks.
//
// A copy of a range (MPI_Comm_dup) is made by each member alone: MPI orders the collective
// calls on the parent, so the k-th copy is the same communicator at every member and its
// identity is derived without a message (docs/tag-layout.md).
#include <array>
#include <functional>
#include <memory>
#include <random>

#include "comms/creation.h"
#include "comms/hints.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "rangecomm/collectives.hpp"
#include "rangecomm/embedding.hpp"
#include "requests/requests.h"

namespace rcshim {

int start_creation(MPI_Comm comm, const char* fn, MPI_Comm* newcomm, MPI_Request* request,
                   const std::function<int(rangecomm::Comm*, rangecomm::Request*)>& start) {
  auto made = std::make_shared<rangecomm::Comm>();
  int rc =
      start_request(comm, request, fn, [&](rangecomm::Request* r) { return start(made.get(), r); });
  if (rc != MPI_SUCCESS) {
    release_comm(*newcomm);
    *newcomm = MPI_COMM_NULL;
    return rc;
  }
  FakeRequest* r = find_request(*request);
  r->keep = made;
  r->on_complete = [made, handle = *newcomm]() {
    if (FakeComm* d = find_comm(handle)) d->range = std::move(*made);  // unless freed meanwhile
    return MPI_SUCCESS;
  };
  return MPI_SUCCESS;
}

int idup_in_order(const rangecomm::Comm& of, rangecomm::Comm* out, rangecomm::Request* request) {
  rangecomm::Request made;  // complete at once
  if (int rc = rangecomm::Icomm_dup(of, out, &made)) return rc;
  return rangecomm::Ibarrier(*out, request);
}

namespace {

// The new entry gets the parent's attributes (copy callbacks) and info, with the hints MPI adds
// to a dup's (dup: MPI_Comm_dup and _dup_with_info, not _idup); on failure it goes.
int dress_copy(MPI_Comm comm, MPI_Comm* newcomm, MPI_Info info, bool dup) {
  FakeComm* c = find_comm(comm);
  FakeComm* d = find_comm(*newcomm);
  if (info != MPI_INFO_NULL) {
    create_with_hints(*d, info);
  } else {
    copy_hints(*c, *d);
  }
  if (dup) add_dup_hints(*d);
  int rc = copy_attributes(comm, *c, *d);
  if (rc == MPI_SUCCESS) return rc;
  delete_all_attributes(*newcomm, *d);
  release_comm(*newcomm);
  *newcomm = MPI_COMM_NULL;
  return raise_on(comm, rc);
}

int dup_range(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, const char* fn) {
  RC_FAKE_RANGE(fn);
  int n = range.size();
  rangecomm::Comm copy;
  int rc = rangecomm::Split_Comm_below(range, 0, n - 1, 1, kCollectiveLevel, &copy);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  if (int rc = new_comm(std::move(copy), c->errhandler, newcomm, comm)) return rc;
  return dress_copy(comm, newcomm, info, /*dup=*/true);
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return dup_range(comm, MPI_INFO_NULL, newcomm, "MPI_Comm_dup");
}

extern "C" int rc_fake_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return dup_range(comm, info, newcomm, "MPI_Comm_dup_with_info");
}

// The handle is handed out at once, and the copy with it: rangecomm::Icomm_dup derives it from
// the range's next collective sequence number, without a message; the request completes when
// every member has started the idup (idup_in_order).
extern "C" int rc_fake_MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Comm_idup");
  if (int rc = new_pending_comm(c->errhandler, newcomm, comm)) return rc;
  if (int rc = dress_copy(comm, newcomm, MPI_INFO_NULL, /*dup=*/false)) return rc;
  return start_creation(
      comm, "MPI_Comm_idup", newcomm, request,
      [&](rangecomm::Comm* out, rangecomm::Request* r) { return idup_in_order(range, out, r); });
}

#if MPI_VERSION >= 4
extern "C" int rc_fake_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                               MPI_Request* request) {
  int rc = rc_fake_MPI_Comm_idup(comm, newcomm, request);
  if (rc != MPI_SUCCESS || info == MPI_INFO_NULL) return rc;
  FakeComm* d = find_comm(*newcomm);
  return result(comm, create_with_hints(*d, info));
}
#endif

extern "C" int rc_fake_MPI_Comm_free(MPI_Comm* comm) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(*comm, "MPI_Comm_free", &c)) return rc;
  if (int rc = delete_all_attributes(*comm, *c)) return raise_on(*comm, rc);
  release_comm(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

// Nothing of a range is pending in MPI's sense beyond what its requests complete on their own.
extern "C" int rc_fake_MPI_Comm_disconnect(MPI_Comm* comm) { return rc_fake_MPI_Comm_free(comm); }
