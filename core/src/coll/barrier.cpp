// Barrier. Up to BARRIER_DIRECT_PROCS processes (default 8): every process sends an empty
// message to every other one, one round. Beyond: dissemination, ceil(log2 p) rounds of empty
// messages, any p.
#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable barrier_direct_procs{"BARRIER_DIRECT_PROCS", 8};
}  // namespace tune

enum class Algorithm { direct, dissemination };
constexpr const char* kNames[] = {"direct", "dissemination"};
detail::Forced forced{"BARRIER", kNames};

Algorithm choose(int size) {
  Algorithm chosen =
      size <= tune::barrier_direct_procs() ? Algorithm::direct : Algorithm::dissemination;
  return detail::select(
      forced, [](Algorithm) { return true; }, chosen);
}

int barrier(const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_comm(comm, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (choose(s->size) == Algorithm::direct) {
      for (int k = 1; k < s->size; ++k) {
        plan.send(nullptr, 0, MPI_BYTE, (s->rank + k) % s->size);
        plan.recv(nullptr, 0, MPI_BYTE, (s->rank - k + s->size) % s->size);
      }
      plan.end_round();
      return;
    }
    for (int dist = 1; dist < s->size; dist <<= 1) {
      plan.send(nullptr, 0, MPI_BYTE, (s->rank + dist) % s->size);
      plan.recv(nullptr, 0, MPI_BYTE, (s->rank - dist + s->size) % s->size);
      plan.end_round();
    }
  });
}
}  // namespace

int Barrier(const Comm& comm) { return barrier(comm, nullptr, "Barrier"); }

int Ibarrier(const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ibarrier: request is null");
  return barrier(comm, request, "Ibarrier");
}

}  // namespace rangecomm
