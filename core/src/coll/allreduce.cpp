// Allreduce. Small messages on few processes: direct (every process sends its vector to every
// other and folds them all in rank order; one round, any op). Short messages: recursive
// doubling (log p exchanges; ranks beyond the largest power of two fold into a partner first).
// Long messages: Rabenseifner's reduce-scatter by recursive halving plus allgather by recursive
// doubling (2 log p exchanges, about 2 * count elements sent per process); for very long
// messages on a process count that is not a power of two, a ring reduce-scatter then a ring
// allgather (no fold-in). These need a commutative op; for a non-commutative one beyond the
// direct algorithm's sizes, a rank-order binomial reduce to 0 and a broadcast.
#include <climits>
#include <vector>

#include "common.hpp"
#include "rangecomm/collectives.hpp"
#include "tuning.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable allreduce_direct_procs{"ALLREDUCE_DIRECT_PROCS", 8};
detail::Tunable allreduce_direct_bytes{"ALLREDUCE_DIRECT_BYTES", 2048};
detail::Tunable allreduce_short_bytes{"ALLREDUCE_SHORT_BYTES", 8192};
detail::Tunable allreduce_ring_bytes{"ALLREDUCE_RING_BYTES", 2 << 20};
}  // namespace tune

using detail::Plan;

void add_recursive_doubling(Plan& s, void* buf, int count, MPI_Datatype type, MPI_Op op,
                            int rank, int size) {
  detail::Fold fold(size);
  void* tmp = s.scratch(count, type);
  int newrank = fold.fold_in(s, buf, tmp, count, type, op, rank, true);
  if (newrank < 0) return;
  for (int mask = 1; mask < fold.pof2; mask <<= 1) {
    int partner = fold.real(newrank ^ mask);
    s.send(buf, count, type, partner);
    s.recv(tmp, count, type, partner);
    s.end_round();
    s.reduce(tmp, buf, count, type, op);
  }
  fold.fold_out(s, buf, count, type, rank);
}

// Rabenseifner: a reduce-scatter by recursive halving, after which process newrank holds block
// newrank reduced, then an allgather by recursive doubling. Each process sends and receives
// about 2 * count elements in 2 * log2(pof2) exchanges. On a power of two the first step works
// from sendbuf, so buf is never a copy of it; otherwise buf starts as one for the fold-in.
void add_rabenseifner(Plan& s, const void* sendbuf, void* buf, int count, MPI_Datatype type,
                      MPI_Op op, int rank, int size) {
  detail::Fold fold(size);
  detail::Blocks source = detail::source_blocks(sendbuf, count, type, fold.pof2);
  bool from_source = fold.none() && fold.pof2 > 1 && sendbuf != buf;
  if (!from_source) s.copy(sendbuf, count, type, buf, count, type);
  void* tmp = s.scratch(count, type);
  int newrank = fold.fold_in(s, buf, tmp, count, type, op, rank, true);
  if (newrank < 0) return;
  detail::Blocks mine(buf, count, type, fold.pof2), theirs(tmp, count, type, fold.pof2);
  detail::add_halving_reduce_scatter(s, mine, theirs, type, op, newrank, fold,
                                     from_source ? &source : nullptr);
  for (int mask = 1; mask < fold.pof2; mask <<= 1) {
    int partner = newrank ^ mask;
    int my_lo = newrank & ~(mask - 1), their_lo = partner & ~(mask - 1);
    s.send(mine.at(my_lo), detail::span_length(mine, my_lo, my_lo + mask), type, fold.real(partner));
    s.recv(mine.at(their_lo), detail::span_length(mine, their_lo, their_lo + mask), type,
           fold.real(partner));
    s.end_round();
  }
  fold.fold_out(s, buf, count, type, rank);
}

// Direct: every process sends its vector to every other one and folds all of them itself, in
// rank order (x0 op (x1 op (... op x_{p-1}))), so every process computes the same result and a
// non-commutative op is honoured. One round of messages instead of log2 p rounds that each wait
// for a partner; p - 1 messages and p vectors of scratch per process, so only for small
// messages on few processes.
void add_direct(Plan& s, void* buf, int count, MPI_Datatype type, MPI_Op op, int rank,
                int size) {
  MPI_Aint extent = detail::type_facts(type).extent;
  char* all = static_cast<char*>(s.scratch(count * size, type));
  auto slot = [&](int i) { return all + static_cast<MPI_Aint>(i) * count * extent; };
  auto& [sends, recvs] = detail::exchange_parts(size);
  for (int i = 0; i < size; ++i) {
    sends[i] = {buf, count, type};
    recvs[i] = {slot(i), count, type};
  }
  detail::add_exchange(s, sends, recvs, false, false, rank, size);
  s.copy(slot(size - 1), count, type, buf, count, type);
  for (int i = size - 2; i >= 0; --i) s.reduce(slot(i), buf, count, type, op);
}

void add_ring(Plan& s, const void* sendbuf, void* buf, int count, MPI_Datatype type,
              MPI_Op op, int rank, int size) {
  detail::Blocks blocks(buf, count, type, size);
  detail::Blocks source = detail::source_blocks(sendbuf, count, type, size);
  detail::add_ring_reduce_scatter(s, blocks, type, op, rank, size,
                                  sendbuf != buf && size > 1 ? &source : nullptr);
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
  return detail::run(comm, request, [&](detail::Plan& plan) {
    long long bytes = detail::bytes_of(count, type);
    if (count == 0) {
      // nothing to do
    } else if (s->size > 1 && s->size <= tune::allreduce_direct_procs() &&
               bytes <= tune::allreduce_direct_bytes() &&
               static_cast<long long>(count) * s->size <= INT_MAX) {
      plan.copy(sendbuf, count, type, recvbuf, count, type);
      add_direct(plan, recvbuf, count, type, op, s->rank, s->size);
    } else if (!detail::commutative(op) || s->size == 1) {
      // Non-roots reduce from sendbuf; recvbuf only ever receives the final result.
      detail::add_reduce(plan, sendbuf, recvbuf, count, type, op, 0, s->rank, s->size);
      detail::add_bcast(plan, recvbuf, count, type, 0, s->rank, s->size);
    } else if (bytes < tune::allreduce_short_bytes() || count < s->size) {
      plan.copy(sendbuf, count, type, recvbuf, count, type);
      add_recursive_doubling(plan, recvbuf, count, type, op, s->rank, s->size);
    } else if (detail::Fold(s->size).none() ||
               bytes < tune::allreduce_ring_bytes()) {
      add_rabenseifner(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size);
    } else {  // Rabenseifner's fold-in would move the whole vector twice more
      add_ring(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size);
    }
  });
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
