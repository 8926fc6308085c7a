// Reduce: a binomial tree (rank order kept for non-commutative operations).
#include "common.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_root(*s, root, fn);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == MPI_IN_PLACE) {
    if (s->rank != root)
      return detail::raise(s->errcomm(), MPI_ERR_BUFFER, "%s: MPI_IN_PLACE is only for the root", fn);
    sendbuf = recvbuf;
  }
  auto sched = std::make_unique<detail::Schedule>();
  if (count > 0) detail::add_reduce(*sched, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
  return detail::run(comm, std::move(sched), request);
}

}  // namespace

int Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm) {
  return reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr, "Reduce");
}

int Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            int root, const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ireduce: request is null");
  return reduce(sendbuf, recvbuf, count, type, op, root, comm, request, "Ireduce");
}

}  // namespace rangecomm
