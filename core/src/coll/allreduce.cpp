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

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable allreduce_direct_procs{"ALLREDUCE_DIRECT_PROCS", 8};
detail::Tunable allreduce_direct_bytes{"ALLREDUCE_DIRECT_BYTES", 2048};
detail::Tunable allreduce_short_bytes{"ALLREDUCE_SHORT_BYTES", 8192};
detail::Tunable allreduce_ring_bytes{"ALLREDUCE_RING_BYTES", 2 << 20};
}  // namespace tune

using detail::Plan;

void add_recursive_doubling(Plan& s, void* buf, int count, MPI_Datatype type, MPI_Op op, int rank,
                            int size) {
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

// Rabenseifner: a reduce-scatter by recursive halving, nearest partner first (the association
// of recursive doubling, as in MPICH), then an allgather that undoes its steps in reverse. Each
// process sends and receives about 2 * count elements in 2 * log2(pof2) exchanges. On a power of
// two the first step works from sendbuf, so buf is never a copy of it; otherwise buf starts as
// one for the fold-in.
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
  detail::HalvingSpans spans;
  detail::add_halving_reduce_scatter(s, mine, theirs, type, op, newrank, fold,
                                     from_source ? &source : nullptr, &spans);
  auto [lo, hi] = spans.kept;
  for (int step = spans.steps - 1; step >= 0; --step) {
    int partner = fold.real(newrank ^ (1 << step));
    auto [whole_lo, whole_hi] = spans.before[step];
    int their_lo = lo == whole_lo ? hi : whole_lo, their_hi = lo == whole_lo ? whole_hi : lo;
    s.send(mine.at(lo), detail::span_length(mine, lo, hi), type, partner);
    s.recv(mine.at(their_lo), detail::span_length(mine, their_lo, their_hi), type, partner);
    s.end_round();
    lo = whole_lo;
    hi = whole_hi;
  }
  fold.fold_out(s, buf, count, type, rank);
}

// Direct: every process sends its vector to every other one and combines all of them itself,
// so every process computes the same result. One round of messages instead of log2 p rounds
// that each wait for a partner; p - 1 messages and p vectors of scratch per process, so only
// for small messages on few processes. The vectors are combined as recursive doubling combines
// them (below), lower ranks on the left, so a non-commutative op is honoured and floating-point
// sums have the bits MPI's own allreduce gives.
void add_direct(Plan& s, void* buf, int count, MPI_Datatype type, MPI_Op op, int rank, int size) {
  MPI_Aint extent = detail::type_facts(type).extent;
  char* all = static_cast<char*>(s.scratch(count * size, type));
  auto slot = [&](int i) { return all + static_cast<MPI_Aint>(i) * count * extent; };
  auto& [sends, recvs] = detail::exchange_parts(size);
  for (int i = 0; i < size; ++i) {
    sends[i] = {buf, count, type};
    recvs[i] = {slot(i), count, type};
  }
  detail::add_exchange(s, sends, recvs, false, false, rank, size);
  // The association of recursive doubling as MPICH, and Open MPI's recursive doubling, run it
  // (the same bits, checked against both at 3 to 5 processes): ranks 2k and 2k + 1 for
  // k < rem first, then the pof2 partial results pairwise at distance 1, 2, 4, ... Each result
  // lands in the higher slot (reduce writes its second operand), so item k of the pof2 lives
  // in slot(fold.real(k)) and the whole in slot(size - 1).
  detail::Fold fold(size);
  for (int k = 0; k < fold.rem; ++k) s.reduce(slot(2 * k), slot(2 * k + 1), count, type, op);
  for (int mask = 1; mask < fold.pof2; mask <<= 1)
    for (int j = 0; j < fold.pof2; j += 2 * mask)
      s.reduce(slot(fold.real(j + mask - 1)), slot(fold.real(j + 2 * mask - 1)), count, type, op);
  s.copy(slot(size - 1), count, type, buf, count, type);
}

void add_ring(Plan& s, const void* sendbuf, void* buf, int count, MPI_Datatype type, MPI_Op op,
              int rank, int size) {
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

enum class Algorithm { direct, reduce_bcast, recursive_doubling, rabenseifner, ring };
constexpr const char* kNames[] = {"direct", "reduce_bcast", "recursive_doubling", "rabenseifner",
                                  "ring"};
detail::Forced forced{"ALLREDUCE", kNames};

// Direct and reduce-and-broadcast take any op (rank order kept); the others reorder operands,
// so only for commutative ops, and split the vector into a block per process (Rabenseifner per
// power-of-two process), so only with at least that many elements.
Algorithm choose(const detail::RangeState& s, int count, long long bytes, MPI_Op op) {
  const bool commutative = detail::commutative(op);
  const bool direct_fits = s.size > 1 && static_cast<long long>(count) * s.size <= INT_MAX;
  Algorithm chosen;
  if (direct_fits && s.size <= tune::allreduce_direct_procs() &&
      bytes <= tune::allreduce_direct_bytes())
    chosen = Algorithm::direct;
  else if (!commutative || s.size == 1)
    chosen = Algorithm::reduce_bcast;
  else if (bytes < tune::allreduce_short_bytes() || count < s.size)
    chosen = Algorithm::recursive_doubling;
  else if (detail::Fold(s.size).none() || bytes < tune::allreduce_ring_bytes())
    chosen = Algorithm::rabenseifner;
  else  // Rabenseifner's fold-in would move the whole vector twice more
    chosen = Algorithm::ring;
  auto fits = [&](Algorithm a) {
    switch (a) {
      case Algorithm::direct:
        return direct_fits;
      case Algorithm::reduce_bcast:
        return true;
      case Algorithm::recursive_doubling:
        return commutative;
      default:
        return commutative && s.size > 1 && count >= s.size;
    }
  };
  return detail::select(forced, fits, chosen);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == recvbuf && count > 0)
    return detail::raise(s->errcomm(), MPI_ERR_BUFFER,
                         "%s: sendbuf and recvbuf are one buffer (MPI_IN_PLACE reduces in place)",
                         fn);
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (count == 0) return;
    switch (choose(*s, count, detail::bytes_of(count, type), op)) {
      case Algorithm::direct:
        plan.copy(sendbuf, count, type, recvbuf, count, type);
        add_direct(plan, recvbuf, count, type, op, s->rank, s->size);
        break;
      case Algorithm::reduce_bcast:
        // Non-roots reduce from sendbuf; recvbuf only ever receives the final result.
        detail::add_reduce(plan, sendbuf, recvbuf, count, type, op, 0, s->rank, s->size);
        detail::add_bcast(plan, recvbuf, count, type, 0, s->rank, s->size);
        break;
      case Algorithm::recursive_doubling:
        plan.copy(sendbuf, count, type, recvbuf, count, type);
        add_recursive_doubling(plan, recvbuf, count, type, op, s->rank, s->size);
        break;
      case Algorithm::rabenseifner:
        add_rabenseifner(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size);
        break;
      case Algorithm::ring:
        add_ring(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size);
        break;
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
  if (!request)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iallreduce: request is null");
  return allreduce(sendbuf, recvbuf, count, type, op, comm, request, "Iallreduce");
}

}  // namespace rangecomm
