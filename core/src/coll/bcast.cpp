// Broadcast: binomial tree.
#include "common.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {
int bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm, Request* request,
          const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_comm(comm, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_root(*s, root, fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, count, type, fn);
  if (rc != MPI_SUCCESS) return rc;
  auto sched = std::make_unique<detail::Schedule>();
  if (count > 0) detail::add_bcast(*sched, buf, count, type, root, s->rank, s->size);
  return detail::run(comm, std::move(sched), request);
}
}  // namespace

int Bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  return bcast(buf, count, type, root, comm, nullptr, "Bcast");
}

int Ibcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm,
           Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ibcast: request is null");
  return bcast(buf, count, type, root, comm, request, "Ibcast");
}

}  // namespace rangecomm
