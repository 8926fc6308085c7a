// Reduce: a binomial tree (also for every non-commutative operation: rank order kept); for long
// messages with a commutative operation, Rabenseifner's reduce-scatter by recursive halving and
// a gather by recursive doubling onto the root, or on a process count that is not a power of
// two and very long messages, a ring reduce-scatter and each block sent to the root. On shared
// memory the binomial tree moves the least data in total (p - 1 messages), so it wins up to
// several MiB there; the thresholds move long messages to the others.
#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

// Where the binomial tree stops, measured per MPI library: through Open MPI's shared memory the
// tree, which moves the least data in total, wins up to several MiB (64 KiB through the ring
// took 5.6x native on 8 ranks); MPICH sends a message beyond its shared-memory eager size
// (about 16 KiB) by rendezvous, so Rabenseifner's halved messages win from 16 KiB (binomial
// 2.8-3x native at 16 KiB on 2 ranks, Rabenseifner 0.9x).
#if defined(OPEN_MPI)
constexpr long long kReduceShortBytes = 4 << 20;
#else
constexpr long long kReduceShortBytes = 8192;
#endif

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable reduce_short_bytes{"REDUCE_SHORT_BYTES", kReduceShortBytes};
detail::Tunable reduce_ring_bytes{"REDUCE_RING_BYTES", 8 << 20};
}  // namespace tune

void add_ring_reduce(detail::Plan& s, const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype type, MPI_Op op, int root, int rank, int size) {
  // recvbuf is insignificant off the root: work in scratch there.
  void* work = rank == root ? recvbuf : s.scratch(count, type);
  detail::Blocks blocks(work, count, type, size);
  detail::Blocks source = detail::source_blocks(sendbuf, count, type, size);
  detail::add_ring_reduce_scatter(s, blocks, type, op, rank, size,
                                  sendbuf != work && size > 1 ? &source : nullptr);
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

// Rabenseifner: a reduce-scatter by recursive halving, then the blocks gathered by recursive
// doubling in reverse onto one process (the root, or when the root sat the halving out, the
// partner it folded into, which passes the whole result on): log2 p steps each way instead of
// the ring's p.
void add_rabenseifner_reduce(detail::Plan& s, const void* sendbuf, void* recvbuf, int count,
                             MPI_Datatype type, MPI_Op op, int root, int rank, int size) {
  detail::Fold fold(size);
  bool root_sits_out = fold.newrank(root) < 0;
  int target = fold.newrank(root_sits_out ? root + 1 : root);
  // recvbuf is insignificant off the root: work in scratch there. On a power of two the first
  // halving step works from sendbuf, so work is never a copy of it.
  void* work = rank == root ? recvbuf : s.scratch(count, type);
  detail::Blocks source = detail::source_blocks(sendbuf, count, type, fold.pof2);
  bool from_source = fold.none() && fold.pof2 > 1 && work != sendbuf;
  if (!from_source && work != sendbuf) s.copy(sendbuf, count, type, work, count, type);
  void* tmp = s.scratch(count, type);
  int newrank = fold.fold_in(s, work, tmp, count, type, op, rank, rank == root);
  if (newrank < 0) return;
  detail::Blocks mine(work, count, type, fold.pof2), theirs(tmp, count, type, fold.pof2);
  detail::add_halving_reduce_scatter(s, mine, theirs, type, op, newrank, fold,
                                     from_source ? &source : nullptr);
  // Step `mask`: every process still holding blocks has mask of them, aligned; the one of each
  // pair farther from the target (by the bit `mask` of newrank ^ target) hands them over.
  int away = newrank ^ target;
  for (int mask = 1; mask < fold.pof2; mask <<= 1) {
    int partner = newrank ^ mask;
    if (away & mask) {
      int my_lo = newrank & ~(mask - 1);
      s.send(mine.at(my_lo), detail::span_length(mine, my_lo, my_lo + mask), type,
             fold.real(partner));
      s.end_round();
      return;
    }
    int their_lo = partner & ~(mask - 1);
    s.recv(mine.at(their_lo), detail::span_length(mine, their_lo, their_lo + mask), type,
           fold.real(partner));
    s.end_round();
  }
  if (root_sits_out) s.send(work, count, type, root);  // this is root + 1
  s.end_round();
}

enum class Algorithm { binomial, rabenseifner, ring };
constexpr const char* kNames[] = {"binomial", "rabenseifner", "ring"};
detail::Forced forced{"REDUCE", kNames};

// The binomial tree takes any op (rank order kept); the others reorder operands and split the
// vector into a block per process, so only for commutative ops with that many elements.
Algorithm choose(int size, int count, long long bytes, MPI_Op op) {
  const bool blocks_fit = detail::commutative(op) && count >= size;
  Algorithm chosen;
  if (bytes < tune::reduce_short_bytes() || !blocks_fit)
    chosen = Algorithm::binomial;
  else if (detail::Fold(size).none() || bytes < tune::reduce_ring_bytes())
    chosen = Algorithm::rabenseifner;
  else
    chosen = Algorithm::ring;
  auto fits = [&](Algorithm a) {  // the ring also needs a second process to pass blocks to
    return a == Algorithm::binomial || (blocks_fit && (a != Algorithm::ring || size > 1));
  };
  return detail::select(forced, fits, chosen);
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_root(*s, root, fn);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == MPI_IN_PLACE) {
    if (s->rank != root)
      return detail::raise(s->errcomm(), MPI_ERR_BUFFER, "%s: MPI_IN_PLACE is only for the root",
                           fn);
    sendbuf = recvbuf;
  } else if (s->rank == root && sendbuf == recvbuf && count > 0) {
    return detail::raise(s->errcomm(), MPI_ERR_BUFFER,
                         "%s: sendbuf and recvbuf are one buffer (MPI_IN_PLACE reduces in place)",
                         fn);
  }
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (count == 0) return;
    switch (choose(s->size, count, detail::bytes_of(count, type), op)) {
      case Algorithm::binomial:
        detail::add_reduce(plan, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
        break;
      case Algorithm::rabenseifner:
        add_rabenseifner_reduce(plan, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
        break;
      case Algorithm::ring:
        add_ring_reduce(plan, sendbuf, recvbuf, count, type, op, root, s->rank, s->size);
        break;
    }
  });
}

}  // namespace

int Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm) {
  return reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr, "Reduce");
}

int Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
            const Comm& comm, Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ireduce: request is null");
  return reduce(sendbuf, recvbuf, count, type, op, root, comm, request, "Ireduce");
}

}  // namespace rangecomm
