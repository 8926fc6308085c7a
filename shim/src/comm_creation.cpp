// Communicators made from range communicators with the standard calls: dup, idup, split,
// create, create_group give range communicators when the result is a range, and real ones
// (through the fallback communicator) otherwise; free deletes attributes with callbacks.
//
// A copy of a range (MPI_Comm_dup) has the same members, so it must sit at another nesting
// level to get another context (docs/tag-layout.md). The members agree on the lowest level
// free at all of them with one bitwise-AND reduction over the parent: these calls are
// collective over it anyway, and no process can then pick a level another one still uses.
#include <array>
#include <functional>
#include <memory>

#include "objects.h"
#include "p2p_support.h"
#include "rangecomm/embedding.hpp"

namespace rcshim {

// Bit L (1..31) is set when the range first..last:stride of parent can be made L levels below
// it without a clash with a live range of this process (always, for a non-member).
std::uint32_t free_levels(const rangecomm::Comm& parent, int first, int last, int stride) {
  std::uint32_t mask = 0;
  for (int level = 1; level < 32; ++level) {
    rangecomm::Comm probe;
    if (rangecomm::Split_Comm_below(parent, first, last, stride, level, &probe) == MPI_SUCCESS)
      mask |= 1u << level;
  }
  return mask;
}

std::uint32_t free_levels(const rangecomm::Comm& parent, const std::vector<int>& ranks) {
  return rangecomm::Free_levels(parent, ranks.data(), static_cast<int>(ranks.size()));
}

int start_creation(MPI_Comm comm, const char* fn, MPI_Comm* newcomm, MPI_Request* request,
                   const std::function<int(rangecomm::Comm*, rangecomm::Request*)>& start) {
  auto made = std::make_shared<rangecomm::Comm>();
  int rc = start_request(comm, request, fn,
                         [&](rangecomm::Request* r) { return start(made.get(), r); });
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

int agree(const rangecomm::Comm& over, std::uint32_t mine, std::uint32_t* common) {
  return rangecomm::Allreduce(&mine, common, 1, MPI_UINT32_T, MPI_BAND, over);
}

int lowest_level(std::uint32_t mask) {
  mask &= ~1u;
  return mask ? __builtin_ctz(mask) : 0;
}

int no_level(MPI_Comm comm, const char* fn) {
  return raise_error(comm, MPI_ERR_COMM,
                     "%s: every one of the 31 nesting levels below this "
                     "range holds a live copy of the new range at some member; free some",
                     fn);
}

namespace {

// The new entry gets the parent's attributes (copy callbacks) and info; on failure it goes.
int dress_copy(MPI_Comm comm, MPI_Comm* newcomm, MPI_Info info) {
  FakeComm* c = find_comm(comm);
  FakeComm* d = find_comm(*newcomm);
  MPI_Info source = info != MPI_INFO_NULL ? info : c->info;
  if (source != MPI_INFO_NULL) MPI_Info_dup(source, &d->info);
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
  std::uint32_t common = 0;
  if (int rc = agree(range, free_levels(range, 0, n - 1, 1), &common)) return raise_on(comm, rc);
  int level = lowest_level(common);
  if (level == 0) return no_level(comm, fn);
  rangecomm::Comm copy;
  if (int rc = rangecomm::Split_Comm_below(range, 0, n - 1, 1, level, &copy))
    return raise_on(comm, rc);
  if (int rc = new_comm(std::move(copy), c->errhandler, newcomm)) return rc;
  return dress_copy(comm, newcomm, info);
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

// The handle is handed out at once; the members agree on a context nonblocking
// (rangecomm::Icomm_create_agreed, which tells concurrent idups of one range apart) and the copy
// is made when the request completes (using the handle before that is an MPI_ERR_COMM error).
extern "C" int rc_fake_MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Comm_idup");
  std::vector<int> all(static_cast<size_t>(range.size()));
  for (int i = 0; i < range.size(); ++i) all[i] = i;
  int serial = c->idups++;
  if (int rc = new_pending_comm(c->errhandler, newcomm)) return rc;
  if (int rc = dress_copy(comm, newcomm, MPI_INFO_NULL)) return rc;
  return start_creation(comm, "MPI_Comm_idup", newcomm, request,
                        [&](rangecomm::Comm* out, rangecomm::Request* r) {
                          return rangecomm::Icomm_create_agreed(range, all.data(), range.size(),
                                                                serial, out, r);
                        });
}

#if MPI_VERSION >= 4
extern "C" int rc_fake_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                               MPI_Request* request) {
  int rc = rc_fake_MPI_Comm_idup(comm, newcomm, request);
  if (rc != MPI_SUCCESS || info == MPI_INFO_NULL) return rc;
  FakeComm* d = find_comm(*newcomm);
  if (d->info != MPI_INFO_NULL) MPI_Info_free(&d->info);
  return result(comm, MPI_Info_dup(info, &d->info));
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
