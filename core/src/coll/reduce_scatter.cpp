// Reduce_scatter and Reduce_scatter_block. Commutative operations, short vectors: recursive
// halving (log p exchanges of half, a quarter, ... of the vector; ranks past the largest power
// of two fold into a partner first and get their block back at the end). Long vectors:
// pairwise exchange (p - 1 rounds, each process sends every block straight to its owner, so
// nothing travels twice). Non-commutative operations: a rank-order binomial reduce of the whole
// vector to rank 0, which sends every block to its owner.
#include <climits>
#include <vector>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable reduce_scatter_short_bytes{"REDUCE_SCATTER_SHORT_BYTES", 524288};
}  // namespace tune

using detail::Plan;

// The blocks of the vector: block j (counts[j] elements at displs[j]) belongs to rank j.
struct Blocks {
  std::vector<int> counts, displs;
  int total = 0;
  MPI_Datatype type;
  MPI_Aint extent = 0;
  char* at(const void* base, int element) const {
    return const_cast<char*>(static_cast<const char*>(base)) + element * extent;
  }
};

void send_nonempty(Plan& s, const void* buf, int count, MPI_Datatype type, int peer) {
  if (count > 0) s.send(buf, count, type, peer);
}
void recv_nonempty(Plan& s, void* buf, int count, MPI_Datatype type, int peer) {
  if (count > 0) s.recv(buf, count, type, peer);
}

// MPICH's recursive halving. After folding, process `newrank` of the pof2 survivors owns new
// block newrank: old blocks 2i and 2i + 1 for i < rem (the pair that folded), old block i + rem
// after. Each step halves the range of new blocks this process is responsible for.
void add_halving(Plan& s, const void* in, void* recvbuf, const Blocks& b, MPI_Op op, int rank,
                 int size) {
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  int rem = size - pof2;
  MPI_Datatype t = b.type;
  if (rank < 2 * rem && rank % 2 == 0) {  // folds into rank + 1
    send_nonempty(s, in, b.total, t, rank + 1);
    s.end_round();
    recv_nonempty(s, recvbuf, b.counts[rank], t, rank + 1);
    s.end_round();
    return;
  }
  void* results = s.scratch(b.total, t);
  void* incoming = s.scratch(b.total, t);
  s.copy(in, b.total, t, results, b.total, t);
  if (rank < 2 * rem) {
    recv_nonempty(s, incoming, b.total, t, rank - 1);
    s.end_round();
    s.reduce(incoming, results, b.total, t, op);
  }
  int newrank = rank < 2 * rem ? rank / 2 : rank - rem;
  auto real = [rem](int nr) { return nr < rem ? 2 * nr + 1 : nr + rem; };
  // First element of new block i (i == pof2: the end of the vector).
  auto off = [&](int i) { return i == pof2 ? b.total : b.displs[i < rem ? 2 * i : i + rem]; };
  int send_idx = 0, recv_idx = 0, last_idx = pof2;
  for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
    int newdst = newrank ^ mask;
    int s0, s1, r0, r1;  // new-block ranges [s0, s1) to send and [r0, r1) to receive
    if (newrank < newdst) {
      send_idx = recv_idx + mask;
      s0 = send_idx, s1 = last_idx, r0 = recv_idx, r1 = send_idx;
    } else {
      recv_idx = send_idx + mask;
      s0 = send_idx, s1 = recv_idx, r0 = recv_idx, r1 = last_idx;
    }
    int rcount = off(r1) - off(r0);
    send_nonempty(s, b.at(results, off(s0)), off(s1) - off(s0), t, real(newdst));
    recv_nonempty(s, b.at(incoming, off(r0)), rcount, t, real(newdst));
    s.end_round();
    s.reduce(b.at(incoming, off(r0)), b.at(results, off(r0)), rcount, t, op);
    send_idx = recv_idx;
    last_idx = recv_idx + mask;
  }
  s.copy(b.at(results, b.displs[rank]), b.counts[rank], t, recvbuf, b.counts[rank], t);
  if (rank < 2 * rem)
    send_nonempty(s, b.at(results, b.displs[rank - 1]), b.counts[rank - 1], t, rank - 1);
  s.end_round();
}

// Round k: block r + k goes to its owner, this process's block comes from r - k. In place the
// result collects in scratch, as the input's blocks are still being sent.
void add_pairwise(Plan& s, const void* in, void* recvbuf, bool in_place, const Blocks& b, MPI_Op op,
                  int rank, int size) {
  MPI_Datatype t = b.type;
  int mine = b.counts[rank];
  void* acc = in_place ? s.scratch(mine, t) : recvbuf;
  void* incoming = s.scratch(mine, t);
  s.copy(b.at(in, b.displs[rank]), mine, t, acc, mine, t);
  for (int k = 1; k < size; ++k) {
    int to = (rank + k) % size, from = (rank - k + size) % size;
    send_nonempty(s, b.at(in, b.displs[to]), b.counts[to], t, to);
    recv_nonempty(s, incoming, mine, t, from);
    s.end_round();
    s.reduce(incoming, acc, mine, t, op);  // commutative: the order does not matter
  }
  s.copy(acc, mine, t, recvbuf, mine, t);
  s.end_round();
}

void add_reduce_then_scatter(Plan& s, const void* in, void* recvbuf, const Blocks& b, MPI_Op op,
                             int rank, int size) {
  MPI_Datatype t = b.type;
  void* full = rank == 0 ? s.scratch(b.total, t) : nullptr;
  detail::add_reduce(s, in, full, b.total, t, op, 0, rank, size);
  if (rank == 0) {
    s.copy(full, b.counts[0], t, recvbuf, b.counts[0], t);
    for (int j = 1; j < size; ++j) send_nonempty(s, b.at(full, b.displs[j]), b.counts[j], t, j);
  } else {
    recv_nonempty(s, recvbuf, b.counts[rank], t, 0);
  }
  s.end_round();
}

enum class Algorithm { reduce_then_scatter, halving, pairwise };
constexpr const char* kNames[] = {"reduce_then_scatter", "halving", "pairwise"};
detail::Forced forced{"REDUCE_SCATTER", kNames};  // Reduce_scatter and Reduce_scatter_block

// Reducing to rank 0 in rank order and scattering takes any op; recursive halving and the
// pairwise exchange reorder operands, so only for commutative ops.
Algorithm choose(long long bytes, MPI_Op op) {
  const bool commutative = detail::commutative(op);
  Algorithm chosen = Algorithm::pairwise;
  if (!commutative)
    chosen = Algorithm::reduce_then_scatter;
  else if (bytes < tune::reduce_scatter_short_bytes())
    chosen = Algorithm::halving;
  auto fits = [&](Algorithm a) { return a == Algorithm::reduce_then_scatter || commutative; };
  return detail::select(forced, fits, chosen);
}

int reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                   MPI_Op op, const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, 0, type, op, fn, &s);
  if (rc == MPI_SUCCESS && recvbuf == MPI_IN_PLACE)
    rc = detail::raise(s->errcomm(), MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
  if (rc == MPI_SUCCESS && !recvcounts)
    rc = detail::raise(s->errcomm(), MPI_ERR_ARG, "%s: recvcounts is null", fn);
  if (rc != MPI_SUCCESS) return rc;
  Blocks b;
  b.type = type;
  MPI_Aint lb = 0;
  MPI_Type_get_extent(type, &lb, &b.extent);
  long long total = 0;
  for (int j = 0; j < s->size; ++j) {
    if (recvcounts[j] < 0)
      return detail::raise(s->errcomm(), MPI_ERR_COUNT, "%s: recvcounts[%d] = %d is negative", fn,
                           j, recvcounts[j]);
    b.counts.push_back(recvcounts[j]);
    b.displs.push_back(static_cast<int>(total));
    total += recvcounts[j];
    if (total > INT_MAX)
      return detail::raise(s->errcomm(), MPI_ERR_COUNT, "%s: the counts add up past INT_MAX", fn);
  }
  b.total = static_cast<int>(total);
  bool in_place = sendbuf == MPI_IN_PLACE;
  const void* in = in_place ? recvbuf : sendbuf;
  int type_size = 0;
  MPI_Type_size(type, &type_size);
  return detail::run(comm, request, [&](detail::Plan& plan) {
    if (b.total == 0) {
      // nothing to reduce
    } else if (s->size == 1) {
      plan.copy(in, b.total, type, recvbuf, b.total, type);
    } else {
      switch (choose(total * type_size, op)) {
        case Algorithm::reduce_then_scatter:
          add_reduce_then_scatter(plan, in, recvbuf, b, op, s->rank, s->size);
          break;
        case Algorithm::halving:
          add_halving(plan, in, recvbuf, b, op, s->rank, s->size);
          break;
        case Algorithm::pairwise:
          add_pairwise(plan, in, recvbuf, in_place, b, op, s->rank, s->size);
          break;
      }
    }
  });
}

int null_request(const char* fn) {
  return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request is null", fn);
}

int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                         MPI_Op op, const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, recvcount, type, op, fn, &s);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> counts(static_cast<size_t>(s->size), recvcount);
  return reduce_scatter(sendbuf, recvbuf, counts.data(), type, op, comm, request, fn);
}

}  // namespace

int Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                   MPI_Op op, const Comm& comm) {
  return reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, nullptr, "Reduce_scatter");
}

int Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                    MPI_Op op, const Comm& comm, Request* request) {
  if (!request) return null_request("Ireduce_scatter");
  return reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request, "Ireduce_scatter");
}

int Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                         MPI_Op op, const Comm& comm) {
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, nullptr,
                              "Reduce_scatter_block");
}

int Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                          MPI_Op op, const Comm& comm, Request* request) {
  if (!request) return null_request("Ireduce_scatter_block");
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request,
                              "Ireduce_scatter_block");
}

}  // namespace rangecomm
