// Allreduce. Short messages: recursive doubling (log p exchanges; ranks beyond the largest power
// of two fold into a partner first). Long messages: a ring reduce-scatter then a ring allgather,
// so each process sends and receives about 2 * count elements whatever p. Both need a
// commutative op; for a non-commutative one, a rank-order binomial reduce to 0 and a broadcast.
#include "common.hpp"
#include "rangecomm/collectives.hpp"
#include "tuning.hpp"

namespace rangecomm {

namespace {

using detail::Schedule;
using detail::new_schedule;

void add_recursive_doubling(Schedule& s, void* buf, int count, MPI_Datatype type, MPI_Op op,
                            int rank, int size) {
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  int rem = size - pof2;
  void* tmp = s.scratch(count, type);
  int newrank;
  if (rank < 2 * rem) {
    if (rank % 2 == 0) {  // folds into rank + 1, gets the result back at the end
      s.send(buf, count, type, rank + 1);
      s.end_round();
      s.recv(buf, count, type, rank + 1);
      s.end_round();
      return;
    }
    s.recv(tmp, count, type, rank - 1);
    s.end_round();
    s.reduce(tmp, buf, count, type, op);
    newrank = rank / 2;
  } else {
    newrank = rank - rem;
  }
  auto real = [rem](int nr) { return nr < rem ? 2 * nr + 1 : nr + rem; };
  for (int mask = 1; mask < pof2; mask <<= 1) {
    int partner = real(newrank ^ mask);
    s.send(buf, count, type, partner);
    s.recv(tmp, count, type, partner);
    s.end_round();
    s.reduce(tmp, buf, count, type, op);
  }
  if (rank < 2 * rem) s.send(buf, count, type, rank - 1);
  s.end_round();
}

void add_ring(Schedule& s, void* buf, int count, MPI_Datatype type, MPI_Op op, int rank,
              int size) {
  detail::Blocks blocks(buf, count, type, size);
  detail::add_ring_reduce_scatter(s, blocks, type, op, rank, size);
  // Allgather: pass the complete blocks around the ring.
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int k = 0; k < size - 1; ++k) {
    int send_block = (rank + 1 - k + size) % size, recv_block = (rank - k + size) % size;
    s.send(blocks.at(send_block), blocks.length(send_block), type, right);
    s.recv(blocks.at(recv_block), blocks.length(recv_block), type, left);
    s.end_round();
  }
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  auto sched = new_schedule();
  int type_size = 0;
  MPI_Type_size(type, &type_size);
  long long bytes = static_cast<long long>(count) * type_size;
  if (count == 0) {
    // nothing to do
  } else if (!detail::commutative(op) || s->size == 1) {
    // Non-roots reduce from sendbuf; recvbuf only ever receives the final result.
    detail::add_reduce(*sched, sendbuf, recvbuf, count, type, op, 0, s->rank, s->size);
    detail::add_bcast(*sched, recvbuf, count, type, 0, s->rank, s->size);
  } else {
    sched->copy(sendbuf, count, type, recvbuf, count, type);
    if (bytes < detail::tuning("ALLREDUCE_SHORT_BYTES", 8192) || count < s->size)
      add_recursive_doubling(*sched, recvbuf, count, type, op, s->rank, s->size);
    else
      add_ring(*sched, recvbuf, count, type, op, s->rank, s->size);
  }
  return detail::run(comm, std::move(sched), request);
}

}  // namespace

int Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm) {
  return allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr, "Allreduce");
}

int Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iallreduce: request is null");
  return allreduce(sendbuf, recvbuf, count, type, op, comm, request, "Iallreduce");
}

}  // namespace rangecomm
