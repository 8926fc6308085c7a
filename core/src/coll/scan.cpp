// Scan and Exscan: recursive doubling, ceil(log2 p) exchanges of the whole vector, any p.
// In step `mask` each process swaps with rank ^ mask the reduction of its aligned block of
// `mask` ranks (`partial`, what it forwards). A block from below is a prefix of everything this
// process has so far: it goes in front of both the result and the partial. A block from above
// goes behind the partial only. So every reduction is lower ranks first, as a non-commutative
// operation needs.
#include <utility>

#include "common.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

using detail::Schedule;

// Whether some exchange after step `mask` still has a partner (else the partial is dead).
bool partial_needed_after(int mask, int rank, int size) {
  for (int m = mask << 1; m < size; m <<= 1)
    if ((rank ^ m) < size) return true;
  return false;
}

// Inclusive: recvbuf = x0 op ... op x(rank). Exclusive: recvbuf = x0 op ... op x(rank-1), and
// rank 0's recvbuf is never written. sendbuf may equal recvbuf (in place): it is read into the
// partial before the result is first written.
void add_scan(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
              MPI_Op op, int rank, int size, bool exclusive) {
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

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
         const Comm& comm, Request* request, bool exclusive, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_reduction(comm, count, type, op, fn, &s);
  if (rc == MPI_SUCCESS && recvbuf == MPI_IN_PLACE)
    rc = detail::raise(s->errcomm(), MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
  if (rc != MPI_SUCCESS) return rc;
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  auto sched = std::make_unique<Schedule>();
  if (count > 0 && s->size > 1)
    add_scan(*sched, sendbuf, recvbuf, count, type, op, s->rank, s->size, exclusive);
  else if (count > 0 && !exclusive)
    sched->copy(sendbuf, count, type, recvbuf, count, type);
  return detail::run(comm, std::move(sched), request);
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
