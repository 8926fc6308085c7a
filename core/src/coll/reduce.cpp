// Reduce: a binomial tree for short messages and non-commutative operations (rank order kept);
// for long messages with a commutative operation, a ring reduce-scatter and each block sent to
// the root, so no process sends or receives much more than the message twice.
#include "common.hpp"
#include "rangecomm/collectives.hpp"
#include "tuning.hpp"

namespace rangecomm {

namespace {

void add_ring_reduce(detail::Schedule& s, const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype type, MPI_Op op, int root, int rank, int size) {
  // recvbuf is insignificant off the root: work in scratch there.
  void* work = rank == root ? recvbuf : s.scratch(count, type);
  s.copy(sendbuf, count, type, work, count, type);
  detail::Blocks blocks(work, count, type, size);
  detail::add_ring_reduce_scatter(s, blocks, type, op, rank, size);
  int mine = (rank + 1) % size;  // the block completed here
  if (rank != root) {
    s.send(blocks.at(mine), blocks.length(mine), type, root);
  } else {
    for (int r = 0; r < size; ++r) {
      int b = (r + 1) % size;
      if (r != root) s.recv(blocks.at(b), blocks.length(b), type, r);
    }
  }
  s.end_round();
}

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
  auto sched = detail::new_schedule();
  int type_size = 0;
  MPI_Type_size(type, &type_size);
  long long bytes = static_cast<long long>(count) * type_size;
  if (count == 0) {
    // nothing to do
  } else if (bytes < detail::tuning("REDUCE_SHORT_BYTES", 65536) || count < s->size ||
             !detail::commutative(op)) {
    detail::add_reduce(*sched, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
  } else {
    add_ring_reduce(*sched, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
  }
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
