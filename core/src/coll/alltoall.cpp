// All-to-all family. Alltoall on up to ALLTOALL_LINEAR_MAX_SIZE processes: every message posted
// in one round while the blocks are short enough to stay eager; on more processes, Bruck's
// algorithm for short blocks (ceil(log2 p) rounds, each moving about half the blocks, so
// latency rather than volume dominates); pairwise exchange for long blocks (p - 1 rounds,
// round k sending to r + k and receiving from r - k: every block travels once and each process
// talks to one peer at a time). Alltoallv/w: every message posted in one round for moderate p,
// pairwise exchange beyond. MPI_IN_PLACE: the blocks to send are copied out of recvbuf first.
#include <algorithm>
#include <climits>
#include <vector>

#include "coll/common.hpp"
#include "coll/tuning.hpp"
#include "rangecomm/collectives.hpp"

namespace rangecomm {

namespace {

namespace tune {  // thresholds (docs/collectives.md)
detail::Tunable alltoall_linear_max_size{"ALLTOALL_LINEAR_MAX_SIZE", 32};
detail::Tunable alltoall_short_bytes{"ALLTOALL_SHORT_BYTES", 256};
detail::Tunable alltoall_pairwise_bytes{"ALLTOALL_PAIRWISE_BYTES", 1 << 20};
detail::Tunable alltoallv_linear_max_size{"ALLTOALLV_LINEAR_MAX_SIZE", 32};
}  // namespace tune

using detail::add_exchange;
using detail::bytes_of;
using detail::Part;
using detail::Plan;

MPI_Aint extent_of(MPI_Datatype type) { return detail::type_facts(type).extent; }

char* at(const void* base, MPI_Aint offset) {
  return const_cast<char*>(static_cast<const char*>(base)) + offset;
}

// Bruck: rotate so that block i is for rank r + i, then for k = 1, 2, 4, ... pass the blocks
// whose index has bit k set to rank r + k (they travel that far); block i then holds the data
// of rank r - i for this process, and a reversed rotation puts it in place. Every intermediate
// buffer is laid out as consecutive blocks of rc elements of rt, so any run of blocks is one
// (buffer, count, type) triple whatever the datatype.
void add_bruck(Plan& s, const void* sendbuf, int sc, MPI_Datatype st, void* recvbuf, int rc,
               MPI_Datatype rt, int rank, int size) {
  MPI_Aint sblock = sc * extent_of(st), rblock = rc * extent_of(rt);
  auto block = [rblock](void* base, int i) { return at(base, i * rblock); };
  void* tmp = s.scratch(size * rc, rt);
  s.copy(at(sendbuf, rank * sblock), (size - rank) * sc, st, tmp, (size - rank) * rc, rt);
  s.copy(sendbuf, rank * sc, st, block(tmp, size - rank), rank * rc, rt);
  void* pack = s.scratch(size / 2 * rc, rt);  // bit k is set in at most half the indices
  void* incoming = s.scratch(size / 2 * rc, rt);
  for (int k = 1; k < size; k <<= 1) {
    // The indices with bit k set: runs [start, start + k) for start = k, 3k, 5k, ...; a single
    // run leaves straight from tmp.
    bool one_run = 3 * k >= size;
    int blocks = 0;
    for (int start = k; start < size; start += 2 * k) {
      int len = std::min(k, size - start);
      if (!one_run) s.copy(block(tmp, start), len * rc, rt, block(pack, blocks), len * rc, rt);
      blocks += len;
    }
    s.send(one_run ? block(tmp, k) : pack, blocks * rc, rt, (rank + k) % size);
    s.recv(incoming, blocks * rc, rt, (rank - k + size) % size);
    s.end_round();
    blocks = 0;
    for (int start = k; start < size; start += 2 * k) {
      int len = std::min(k, size - start);
      s.copy(block(incoming, blocks), len * rc, rt, block(tmp, start), len * rc, rt);
      blocks += len;
    }
  }
  for (int i = 0; i < size; ++i)
    s.copy(block(tmp, i), rc, rt, block(recvbuf, (rank - i + size) % size), rc, rt);
  s.end_round();
}

int check_comm_and_recvbuf(const Comm& comm, const void* recvbuf, const char* fn,
                           detail::RangeState** s) {
  int rc = detail::check_comm(comm, fn, s);
  if (rc == MPI_SUCCESS && recvbuf == MPI_IN_PLACE)
    rc = detail::raise((*s)->errcomm(), MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
  return rc;
}

enum class Algorithm { linear, bruck, pairwise };
constexpr const char* kNames[] = {"linear", "bruck", "pairwise"};
detail::Forced forced{"ALLTOALL", kNames};

// Up to ALLTOALL_LINEAR_MAX_SIZE processes every message is posted at once while the blocks are
// small enough to stay eager (one round: measured faster than Bruck's log p rounds at 8 and 16
// processes); beyond, Bruck for short blocks. Pairwise for long blocks. Bruck counts all blocks
// at once, so it needs `largest_count` (elements of a block) times the processes to fit an int.
Algorithm choose(int size, long long bytes, int largest_count) {
  const bool few = size <= tune::alltoall_linear_max_size();
  const bool bruck_fits = static_cast<long long>(largest_count) * size <= INT_MAX;
  Algorithm chosen = Algorithm::pairwise;
  if (few && bytes < tune::alltoall_pairwise_bytes())
    chosen = Algorithm::linear;
  else if (!few && bytes < tune::alltoall_short_bytes() && bruck_fits)
    chosen = Algorithm::bruck;
  auto fits = [&](Algorithm a) { return a != Algorithm::bruck || bruck_fits; };
  return detail::select(forced, fits, chosen);
}

enum class ExchangeAlgorithm { linear, pairwise };
constexpr const char* kExchangeNames[] = {"linear", "pairwise"};
detail::Forced forced_exchange{"ALLTOALLV", kExchangeNames};  // Alltoallv and Alltoallw

ExchangeAlgorithm choose_exchange(int size) {
  ExchangeAlgorithm chosen = size > tune::alltoallv_linear_max_size() ? ExchangeAlgorithm::pairwise
                                                                      : ExchangeAlgorithm::linear;
  return detail::select(
      forced_exchange, [](ExchangeAlgorithm) { return true; }, chosen);
}

int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request,
             const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = check_comm_and_recvbuf(comm, recvbuf, fn, &s);
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (rc == MPI_SUCCESS && !in_place) rc = detail::check_buffer(*s, sendcount, sendtype, fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, recvcount, recvtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  if (in_place) {
    sendbuf = recvbuf;
    sendcount = recvcount;
    sendtype = recvtype;
  }
  return detail::run(comm, request, [&](detail::Plan& plan) {
    long long bytes = bytes_of(recvcount, recvtype);  // the same on every process
    if (bytes == 0) {
      // nothing to move
    } else if (s->size == 1) {
      plan.copy(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    } else {
      Algorithm algorithm = choose(s->size, bytes, std::max(sendcount, recvcount));
      if (algorithm == Algorithm::bruck) {
        add_bruck(plan, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, s->rank,
                  s->size);
      } else {
        MPI_Aint sblock = sendcount * extent_of(sendtype), rblock = recvcount * extent_of(recvtype);
        auto& [sends, recvs] = detail::exchange_parts(s->size);
        for (int j = 0; j < s->size; ++j) {
          sends[j] = {at(sendbuf, j * sblock), sendcount, sendtype};
          recvs[j] = {at(recvbuf, j * rblock), recvcount, recvtype};
        }
        add_exchange(plan, sends, recvs, in_place, algorithm == Algorithm::pairwise, s->rank,
                     s->size);
      }
    }
  });
}

// Checks one side's arrays of Alltoallv/w (types null for Alltoallv: its single type is checked
// by the caller).
int check_parts(const detail::RangeState& s, const int counts[], const int displs[],
                const MPI_Datatype types[], bool need_types, const char* side, const char* fn) {
  if (!counts || !displs || (need_types && !types))
    return detail::raise(s.errcomm(), MPI_ERR_ARG, "%s: null %s count, displacement or type array",
                         fn, side);
  for (int j = 0; j < s.size; ++j) {
    if (counts[j] < 0)
      return detail::raise(s.errcomm(), MPI_ERR_COUNT, "%s: %s count %d for rank %d is negative",
                           fn, side, counts[j], j);
    if (need_types && types[j] == MPI_DATATYPE_NULL)
      return detail::raise(s.errcomm(), MPI_ERR_TYPE,
                           "%s: %s type for rank %d is MPI_DATATYPE_NULL", fn, side, j);
  }
  return MPI_SUCCESS;
}

// The common core of Alltoallv and Alltoallw: displacements in bytes, one type per peer (for
// Alltoallv the caller passes its single type for every peer and scaled displacements).
int alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sbytes[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const MPI_Aint rbytes[], const MPI_Datatype recvtypes[], const Comm& comm,
              Request* request) {
  const detail::RangeState& s = *detail::CommAccess::of(comm);
  bool in_place = sendbuf == MPI_IN_PLACE;
  auto& [sends, recvs] = detail::exchange_parts(s.size);
  for (int j = 0; j < s.size; ++j) {
    recvs[j] = {at(recvbuf, rbytes[j]), recvcounts[j], recvtypes[j]};
    sends[j] = in_place ? recvs[j] : Part{at(sendbuf, sbytes[j]), sendcounts[j], sendtypes[j]};
  }
  bool pairwise = choose_exchange(s.size) == ExchangeAlgorithm::pairwise;
  return detail::run(comm, request, [&](detail::Plan& plan) {
    add_exchange(plan, sends, recvs, in_place, pairwise, s.rank, s.size);
  });
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, const Comm& comm, Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = check_comm_and_recvbuf(comm, recvbuf, fn, &s);
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (rc == MPI_SUCCESS && !in_place)
    rc = check_parts(*s, sendcounts, sdispls, nullptr, false, "send", fn);
  if (rc == MPI_SUCCESS && !in_place) rc = detail::check_buffer(*s, 0, sendtype, fn);
  if (rc == MPI_SUCCESS) rc = check_parts(*s, recvcounts, rdispls, nullptr, false, "receive", fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, 0, recvtype, fn);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<MPI_Aint> sbytes(s->size), rbytes(s->size);
  std::vector<MPI_Datatype> stypes(s->size, sendtype), rtypes(s->size, recvtype);
  MPI_Aint sext = in_place ? 0 : extent_of(sendtype), rext = extent_of(recvtype);
  for (int j = 0; j < s->size; ++j) {
    if (!in_place) sbytes[j] = sdispls[j] * sext;
    rbytes[j] = rdispls[j] * rext;
  }
  return alltoallw(sendbuf, sendcounts, sbytes.data(), stypes.data(), recvbuf, recvcounts,
                   rbytes.data(), rtypes.data(), comm, request);
}

int alltoallw_checked(const void* sendbuf, const int sendcounts[], const int sdispls[],
                      const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                      const int rdispls[], const MPI_Datatype recvtypes[], const Comm& comm,
                      Request* request, const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = check_comm_and_recvbuf(comm, recvbuf, fn, &s);
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (rc == MPI_SUCCESS && !in_place)
    rc = check_parts(*s, sendcounts, sdispls, sendtypes, true, "send", fn);
  if (rc == MPI_SUCCESS) rc = check_parts(*s, recvcounts, rdispls, recvtypes, true, "receive", fn);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<MPI_Aint> sbytes(s->size), rbytes(s->size);
  for (int j = 0; j < s->size; ++j) {
    if (!in_place) sbytes[j] = sdispls[j];
    rbytes[j] = rdispls[j];
  }
  return alltoallw(sendbuf, sendcounts, sbytes.data(), sendtypes, recvbuf, recvcounts,
                   rbytes.data(), recvtypes, comm, request);
}

int null_request(const char* fn) {
  return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request is null", fn);
}

}  // namespace

int Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, const Comm& comm) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                  "Alltoall");
}

int Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, const Comm& comm, Request* request) {
  if (!request) return null_request("Ialltoall");
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                  "Ialltoall");
}

int Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, const Comm& comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, nullptr, "Alltoallv");
}

int Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype, const Comm& comm, Request* request) {
  if (!request) return null_request("Ialltoallv");
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, request, "Ialltoallv");
}

int Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const int rdispls[], const MPI_Datatype recvtypes[], const Comm& comm) {
  return alltoallw_checked(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, nullptr, "Alltoallw");
}

int Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
               const int rdispls[], const MPI_Datatype recvtypes[], const Comm& comm,
               Request* request) {
  if (!request) return null_request("Ialltoallw");
  return alltoallw_checked(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, request, "Ialltoallw");
}

}  // namespace rangecomm
