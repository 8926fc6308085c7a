// Allgather and Allgatherv. Small totals on few processes: direct (every process sends its block
// to every other, one round). Other small totals: Bruck's algorithm, ceil(log2 p) rounds for any
// p (round k passes on the min(2^k, p - 2^k) blocks gathered so far to rank - 2^k). Large
// totals: a ring, p - 1 rounds in which every block crosses each link once.
//
// Bruck sends runs of consecutive blocks, so both ends must agree where a run breaks. Allgather
// works in recvbuf, whose layout every rank knows (runs break only where they wrap past the last
// rank). Allgatherv's displacements are each rank's own business, so it gathers into a scratch
// buffer packed in rank order from the own rank on, then copies the blocks out; the ring sends
// one block per message and works in recvbuf directly.
#include <climits>
#include <vector>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable allgather_direct_procs{"ALLGATHER_DIRECT_PROCS", 8};
detail::Tunable allgather_direct_bytes{"ALLGATHER_DIRECT_BYTES", 16384};
detail::Tunable allgather_short_bytes{"ALLGATHER_SHORT_BYTES", 8 << 20};
detail::Tunable allgatherv_short_bytes{"ALLGATHERV_SHORT_BYTES", 81920};
}  // namespace tune

using detail::Plan;

using detail::block_at;

// The blocks of `layout` that a Bruck or ring round moves: counts and element offsets into buf.
struct Layout {
  void* buf;
  std::vector<int> counts;
  std::vector<long long> offsets;
  MPI_Datatype type;
};

// The layout of MPI_Allgather's result: `size` blocks of `count` elements back to back. Reused
// between calls, so that building the collective allocates nothing once warm (valid until the
// next call; core is entered by one thread at a time).
const Layout& regular_layout(void* buf, int count, MPI_Datatype type, int size) {
  static Layout& l = *new Layout;  // never destroyed: usable at exit
  l.buf = buf;
  l.type = type;
  l.counts.assign(size, count);
  l.offsets.resize(size);
  for (int i = 0; i < size; ++i) l.offsets[i] = 1LL * i * count;
  return l;
}

// Sends (or receives) blocks first .. first + n - 1 (mod p), one message per run of blocks that
// lie back to back in the layout. Empty blocks travel not at all.
void add_blocks(Plan& s, const Layout& l, int first, int n, bool send, int peer) {
  int size = static_cast<int>(l.counts.size());
  long long run_offset = 0, run_count = 0;
  auto flush = [&] {
    if (run_count == 0) return;
    char* at = block_at(l.buf, run_offset, l.type);
    int count = static_cast<int>(run_count);
    if (send)
      s.send(at, count, l.type, peer);
    else
      s.recv(at, count, l.type, peer);
    run_count = 0;
  };
  for (int j = 0; j < n; ++j) {
    int b = (first + j) % size;
    if (l.counts[b] == 0) continue;
    if (l.offsets[b] != run_offset + run_count || run_count + l.counts[b] > INT_MAX) {
      flush();
      run_offset = l.offsets[b];
    }
    run_count += l.counts[b];
  }
  flush();
}

void add_bruck(Plan& s, const Layout& l, int rank, int size) {
  for (int dist = 1; dist < size; dist <<= 1) {
    int n = std::min(dist, size - dist);
    add_blocks(s, l, rank, n, true, (rank - dist + size) % size);
    add_blocks(s, l, (rank + dist) % size, n, false, (rank + dist) % size);
    s.end_round();
  }
}

// Direct: the own block into place and to every other process, every other block from its
// owner, all in one round (p - 1 messages each way; for small totals on few processes).
void add_direct(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype, const Layout& l,
                int rank, int size) {
  auto& [sends, recvs] = detail::exchange_parts(size);
  for (int j = 0; j < size; ++j)
    recvs[j] = {block_at(l.buf, l.offsets[j], l.type), l.counts[j], l.type};
  const detail::Part mine = sendbuf == MPI_IN_PLACE
                                ? recvs[rank]
                                : detail::Part{const_cast<void*>(sendbuf), sendcount, sendtype};
  std::fill(sends.begin(), sends.end(), mine);
  detail::add_exchange(s, sends, recvs, false, false, rank, size);
}

enum class Algorithm { direct, bruck, ring };
constexpr const char* kNames[] = {"direct", "bruck", "ring"};
detail::Forced forced{"ALLGATHER", kNames};  // Allgather and Allgatherv

// An allgather of `total` bytes (> 0) on `size` processes: direct when small on few processes,
// else Bruck below `short_bytes`, else the ring. `bruck_fits`: whether Bruck can run it
// (Allgatherv's goes through one scratch buffer of int size).
Algorithm choose(long long total, int size, long long short_bytes, bool bruck_fits) {
  Algorithm chosen = Algorithm::ring;
  if (size <= tune::allgather_direct_procs() && total <= tune::allgather_direct_bytes())
    chosen = Algorithm::direct;
  else if (total < short_bytes && bruck_fits)
    chosen = Algorithm::bruck;
  auto fits = [&](Algorithm a) { return a != Algorithm::bruck || bruck_fits; };
  return detail::select(forced, fits, chosen);
}

void add_ring(Plan& s, const Layout& l, int rank, int size) {
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int k = 0; k < size - 1; ++k) {
    add_blocks(s, l, (rank - k + size) % size, 1, true, right);
    add_blocks(s, l, (rank - k - 1 + size) % size, 1, false, left);
    s.end_round();
  }
}

long long total_bytes(const std::vector<int>& counts, MPI_Datatype type) {
  long long total = 0;
  for (int c : counts) total += c;
  return total * detail::type_facts(type).size;
}

int check_allgather(const Comm& comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    const void* recvbuf, MPI_Datatype recvtype, const char* fn,
                    detail::RangeState** s) {
  int rc = detail::check_comm(comm, fn, s);
  if (rc != MPI_SUCCESS) return rc;
  if (recvbuf == MPI_IN_PLACE)
    return detail::raise((*s)->errcomm(), MPI_ERR_BUFFER, "%s: recvbuf cannot be MPI_IN_PLACE", fn);
  if (sendbuf != MPI_IN_PLACE) rc = detail::check_buffer(**s, sendcount, sendtype, fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(**s, 0, recvtype, fn);
  return rc;
}

int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request,
              const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = check_allgather(comm, sendbuf, sendcount, sendtype, recvbuf, recvtype, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, recvcount, recvtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  const Layout& l = regular_layout(recvbuf, recvcount, recvtype, s->size);
  return detail::run(comm, request, [&](detail::Plan& plan) {
    long long total = total_bytes(l.counts, recvtype);
    if (total == 0) return;
    Algorithm algorithm = choose(total, s->size, tune::allgather_short_bytes(), true);
    if (algorithm == Algorithm::direct) {
      add_direct(plan, sendbuf, sendcount, sendtype, l, s->rank, s->size);
      return;
    }
    if (sendbuf != MPI_IN_PLACE)
      plan.copy(sendbuf, sendcount, sendtype, block_at(recvbuf, l.offsets[s->rank], recvtype),
                recvcount, recvtype);
    if (algorithm == Algorithm::bruck)
      add_bruck(plan, l, s->rank, s->size);
    else
      add_ring(plan, l, s->rank, s->size);
  });
}

// Bruck through a scratch buffer holding blocks rank, rank + 1, ... (mod p) back to back.
void add_bruck_v(Plan& s, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 const Layout& out, int rank, int size) {
  Layout l{nullptr, out.counts, std::vector<long long>(size), out.type};
  long long total = 0;
  for (int j = 0; j < size; ++j) {
    int b = (rank + j) % size;
    l.offsets[b] = total;
    total += l.counts[b];
  }
  l.buf = s.scratch(static_cast<int>(total), out.type);
  void* own = block_at(out.buf, out.offsets[rank], out.type);
  if (sendbuf == MPI_IN_PLACE)
    s.copy(own, out.counts[rank], out.type, l.buf, out.counts[rank], out.type);
  else
    s.copy(sendbuf, sendcount, sendtype, l.buf, out.counts[rank], out.type);
  add_bruck(s, l, rank, size);
  for (int b = 0; b < size; ++b) {
    if (b == rank && sendbuf == MPI_IN_PLACE) continue;
    s.copy(block_at(l.buf, l.offsets[b], l.type), l.counts[b], l.type,
           block_at(out.buf, out.offsets[b], out.type), out.counts[b], out.type);
  }
}

int allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, const Comm& comm,
               Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = check_allgather(comm, sendbuf, sendcount, sendtype, recvbuf, recvtype, fn, &s);
  if (rc == MPI_SUCCESS && (recvcounts == nullptr || displs == nullptr))
    rc = detail::raise(s->errcomm(), MPI_ERR_ARG, "%s: recvcounts or displs is null", fn);
  for (int i = 0; rc == MPI_SUCCESS && i < s->size; ++i)
    rc = detail::check_buffer(*s, recvcounts[i], recvtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  Layout l{recvbuf, std::vector<int>(recvcounts, recvcounts + s->size),
           std::vector<long long>(displs, displs + s->size), recvtype};
  return detail::run(comm, request, [&](detail::Plan& plan) {
    long long total = total_bytes(l.counts, recvtype);
    if (total == 0) return;
    Algorithm algorithm = choose(total, s->size, tune::allgatherv_short_bytes(), total <= INT_MAX);
    if (algorithm == Algorithm::direct) {
      add_direct(plan, sendbuf, sendcount, sendtype, l, s->rank, s->size);
    } else if (algorithm == Algorithm::bruck) {
      add_bruck_v(plan, sendbuf, sendcount, sendtype, l, s->rank, s->size);
    } else {
      if (sendbuf != MPI_IN_PLACE)
        plan.copy(sendbuf, sendcount, sendtype, block_at(recvbuf, displs[s->rank], recvtype),
                  recvcounts[s->rank], recvtype);
      add_ring(plan, l, s->rank, s->size);
    }
  });
}

}  // namespace

int Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, const Comm& comm) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                   "Allgather");
}

int Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request) {
  if (!request)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iallgather: request is null");
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                   "Iallgather");
}

int Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype,
               const Comm& comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    nullptr, "Allgatherv");
}

int Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, const Comm& comm,
                Request* request) {
  if (!request)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Iallgatherv: request is null");
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    request, "Iallgatherv");
}

}  // namespace rangecomm
