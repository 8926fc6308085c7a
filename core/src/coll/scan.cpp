// Scan and Exscan. Two algorithms:
// - A chain (rank r receives the prefix of ranks < r from r - 1, adds its own and passes it on),
//   pipelined in segments: p - 1 + segments steps, each process sends and receives each
//   segment once, and in back-to-back scans rank 0 never waits. Chosen for small ranges and
//   long vectors.
// - Recursive doubling, ceil(log2 p) exchanges of the whole vector, for short vectors on many
//   processes. In step `mask` each process swaps with rank ^ mask the reduction of its aligned
//   block of
// `mask` ranks (`partial`, what it forwards). A block from below is a prefix of everything this
// process has so far: it goes in front of both the result and the partial. A block from above
// goes behind the partial only. So every reduction is lower ranks first, as a non-commutative
// operation needs.
#include <algorithm>
#include <utility>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable scan_chain_max_size{"SCAN_CHAIN_MAX_SIZE", 16};
detail::Tunable scan_chain_bytes{"SCAN_CHAIN_BYTES", 1 << 20};
detail::Tunable scan_segment_bytes{"SCAN_SEGMENT_BYTES", 1 << 20};
}  // namespace tune

using detail::Plan;

// Whether some exchange after step `mask` still has a partner (else the partial is dead).
bool partial_needed_after(int mask, int rank, int size) {
  for (int m = mask << 1; m < size; m <<= 1)
    if ((rank ^ m) < size) return true;
  return false;
}

// Inclusive: recvbuf = x0 op ... op x(rank). Exclusive: recvbuf = x0 op ... op x(rank-1), and
// rank 0's recvbuf is never written. sendbuf may equal recvbuf (in place): it is read into the
// partial before the result is first written.
void add_scan(Plan& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              int rank, int size, bool exclusive) {
  void* partial = s.scratch(count, type);
  void* incoming = s.scratch(count, type);
  s.copy(sendbuf, count, type, partial, count, type);
  if (!exclusive) s.copy(sendbuf, count, type, recvbuf, count, type);
  bool have_result = !exclusive;
  for (int mask = 1; mask < size; mask <<= 1) {
    int peer = rank ^ mask;
    if (peer >= size) continue;
    s.send(partial, count, type, peer);
    s.recv(incoming, count, type, peer);
    s.end_round();
    bool keep_partial = partial_needed_after(mask, rank, size);
    if (peer < rank) {
      if (have_result)
        s.reduce(incoming, recvbuf, count, type, op);
      else
        s.copy(incoming, count, type, recvbuf, count, type);
      have_result = true;
      if (keep_partial) s.reduce(incoming, partial, count, type, op);
    } else if (keep_partial) {
      s.reduce(partial, incoming, count, type, op);  // partial op block-from-above
      std::swap(partial, incoming);
    }
  }
  s.end_round();
}

// The chain, segment by segment. Round t first finishes segment t - 1 (received in round
// t - 1), then receives segment t and passes segment t - 1 on. Two buffers per role suffice:
// a round starts only when the previous one, sends included, has completed.
void add_chain_scan(Plan& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                    MPI_Op op, int rank, int size, bool exclusive, int segment_count) {
  int segments = (count + segment_count - 1) / segment_count;
  MPI_Aint segment_extent = segment_count * detail::type_facts(type).extent;
  auto in_at = [&](int k) { return static_cast<const char*>(sendbuf) + k * segment_extent; };
  auto out_at = [&](int k) { return static_cast<char*>(recvbuf) + k * segment_extent; };
  auto length = [&](int k) { return k + 1 < segments ? segment_count : count - k * segment_count; };
  bool first = rank == 0, last = rank == size - 1;
  // Where the prefix from rank - 1 lands. Exclusive: in recvbuf, it is the result; what goes on
  // is prefix op own values, built in scratch from a copy saved before recvbuf is overwritten
  // (sendbuf may be recvbuf). Inclusive with a commutative op, not in place: in recvbuf too,
  // and own values are folded into it (own op prefix equals prefix op own), so no scratch and
  // no copy. Otherwise inclusive: in scratch, folded into recvbuf, which holds own values.
  bool straight = !exclusive && !first && sendbuf != recvbuf && detail::commutative(op);
  bool need_work = exclusive ? !first && !last : !first && !straight;
  void* work[2] = {nullptr, nullptr};
  for (int b = 0; b < std::min(segments, 2) && need_work; ++b)
    work[b] = s.scratch(segment_count, type);
  if (!exclusive && !straight) s.copy(sendbuf, count, type, recvbuf, count, type);
  for (int t = 0; t <= segments; ++t) {
    if (t > 0 && !first) {
      int k = t - 1;
      if (exclusive) {
        if (need_work) s.reduce(out_at(k), work[k % 2], length(k), type, op);
      } else {
        s.reduce(straight ? in_at(k) : work[k % 2], out_at(k), length(k), type, op);
      }
    }
    if (t < segments && !first) {
      if (exclusive && need_work) s.copy(in_at(t), length(t), type, work[t % 2], length(t), type);
      s.recv(exclusive || straight ? static_cast<void*>(out_at(t)) : work[t % 2], length(t), type,
             rank - 1);
    }
    if (t > 0 && !last) {
      int k = t - 1;
      const void* out = !exclusive ? out_at(k) : first ? in_at(k) : work[k % 2];
      s.send(out, length(k), type, rank + 1);
    }
    s.end_round();
  }
}

enum class Algorithm { chain, recursive_doubling };
constexpr const char* kNames[] = {"chain", "recursive_doubling"};
detail::Forced forced{"SCAN", kNames};  // Scan and Exscan

// Both keep rank order, so both take any op.
Algorithm choose(int size, long long bytes) {
  Algorithm chosen = size <= tune::scan_chain_max_size() || bytes >= tune::scan_chain_bytes()
                         ? Algorithm::chain
                         : Algorithm::recursive_doubling;
  return detail::select(
      forced, [](Algorithm) { return true; }, chosen);
}

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
         const Comm& comm, Request* request, bool exclusive, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc == MPI_SUCCESS && recvbuf == MPI_IN_PLACE)
    rc = detail::raise(s->errcomm(), MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    long long bytes = detail::bytes_of(count, type);
    bool chain = choose(s->size, bytes) == Algorithm::chain;
    if (count > 0 && s->size > 1 && chain) {
      int type_size = detail::type_facts(type).size;
      long long segment_bytes = std::max(1LL, tune::scan_segment_bytes());
      int segment_count = static_cast<int>(
          std::clamp(segment_bytes / std::max(type_size, 1), 1LL, static_cast<long long>(count)));
      add_chain_scan(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size, exclusive,
                     segment_count);
    } else if (count > 0 && s->size > 1) {
      add_scan(plan, sendbuf, recvbuf, count, type, op, s->rank, s->size, exclusive);
    } else if (count > 0 && !exclusive) {
      plan.copy(sendbuf, count, type, recvbuf, count, type);
    }
  });
}

int null_request(const char* fn) {
  return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request is null", fn);
}

}  // namespace

int Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
         const Comm& comm) {
  return scan(sendbuf, recvbuf, count, type, op, comm, nullptr, false, "Scan");
}

int Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
          const Comm& comm, Request* request) {
  if (!request) return null_request("Iscan");
  return scan(sendbuf, recvbuf, count, type, op, comm, request, false, "Iscan");
}

int Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
           const Comm& comm) {
  return scan(sendbuf, recvbuf, count, type, op, comm, nullptr, true, "Exscan");
}

int Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            const Comm& comm, Request* request) {
  if (!request) return null_request("Iexscan");
  return scan(sendbuf, recvbuf, count, type, op, comm, request, true, "Iexscan");
}

}  // namespace rangecomm
