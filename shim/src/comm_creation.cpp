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
#include <random>

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

Reduce reduce_over(const rangecomm::Comm& range) {
  return [&range](const std::uint32_t* in, std::uint32_t* out, int n, MPI_Op op) {
    return rangecomm::Allreduce(in, out, n, MPI_UINT32_T, op, range);
  };
}

namespace {

constexpr int kMaxAgreements = 1000;

// The n-th (0-based, modulo their number) level set in mask (bit 0 ignored).
int nth_level(std::uint32_t mask, std::uint32_t n) {
  mask &= ~1u;
  n %= static_cast<std::uint32_t>(__builtin_popcount(mask));
  for (std::uint32_t i = 0; i < n; ++i) mask &= mask - 1;
  return __builtin_ctz(mask);
}

std::uint32_t draw() {
  static std::minstd_rand engine(std::random_device{}());
  return static_cast<std::uint32_t>(engine());
}

}  // namespace

int agree_and_make(const Reduce& reduce, const std::function<std::uint32_t()>& mask,
                   std::uint32_t required,
                   const std::function<int(int level, rangecomm::Comm* out)>& make,
                   std::uint32_t* common, int* level, rangecomm::Comm* out) {
  std::uint32_t drawn = 0;
  for (int attempt = 0; attempt < kMaxAgreements; ++attempt) {
    *level = 0;
    // Level 1 is left to local creations (MPIX_Comm_create_range), so that a range made
    // locally never clashes with a copy the members agreed on (MPI_Comm_dup and the like).
    std::uint32_t mine = mask() & ~(1u << 1);
    if (int rc = reduce(&mine, common, 1, MPI_BAND)) return rc;
    if ((*common & required) != required || (*common & ~1u) == 0) return MPI_SUCCESS;
    *level = attempt == 0 ? lowest_level(*common) : nth_level(*common, drawn);
    int made = make(*level, out);
    if (!g_threaded) return made;
    std::uint32_t verdict[2] = {made != MPI_SUCCESS ? 1u : 0u, draw()}, agreed[2] = {0, 0};
    if (int rc = reduce(verdict, agreed, 2, MPI_MAX)) {
      *out = rangecomm::Comm();
      return rc;
    }
    if (agreed[0] == 0) return MPI_SUCCESS;
    *out = rangecomm::Comm();  // withdraws the registration everywhere
    drawn = agreed[1];
  }
  *level = 0;
  return rangecomm::Make_error(MPI_ERR_OTHER, "no nesting level agreed after %d attempts",
                               kMaxAgreements);
}

int no_level(MPI_Comm comm, const char* fn) {
  return raise_error(comm, MPI_ERR_COMM,
                     "%s: every one of the nesting levels 2..31 below this "
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
  int level = 0;
  rangecomm::Comm copy;
  int rc = agree_and_make(
      reduce_over(range), [&] { return free_levels(range, 0, n - 1, 1); }, 0,
      [&](int at, rangecomm::Comm* out) {
        return rangecomm::Split_Comm_below(range, 0, n - 1, 1, at, out);
      },
      &common, &level, &copy);
  if (rc != MPI_SUCCESS) return raise_on(comm, rc);
  if (level == 0) return no_level(comm, fn);
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

// The handle is handed out at once; the members agree on a context nonblocking, as one
// collective of the range (rangecomm::Icomm_dup: idups of different ranges never meet), and the
// copy is made when the request completes (using the handle before that is an MPI_ERR_COMM
// error).
extern "C" int rc_fake_MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Comm_idup");
  if (int rc = new_pending_comm(c->errhandler, newcomm)) return rc;
  if (int rc = dress_copy(comm, newcomm, MPI_INFO_NULL)) return rc;
  return start_creation(comm, "MPI_Comm_idup", newcomm, request,
                        [&](rangecomm::Comm* out, rangecomm::Request* r) {
                          return rangecomm::Icomm_dup(range, out, r);
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
