// Broadcast: a binomial tree for short messages (log p steps), on Open MPI sending messages up to
// 32 KiB in eager-sized pieces; for long ones a pipelined chain in segments, so every link
// carries the message once and the root is busy only ~1 message time.
#include "common.hpp"
#include "rangecomm/collectives.hpp"
#include "tuning.hpp"

namespace rangecomm::detail {

void add_chain_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root, int rank,
                     int size, int segment_count) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  int v = relative(rank, root, size);
  int segments = (count + segment_count - 1) / segment_count;
  auto segment = [&](int k) { return static_cast<char*>(buf) + static_cast<MPI_Aint>(k) * segment_count * extent; };
  auto length = [&](int k) { return k + 1 < segments ? segment_count : count - k * segment_count; };
  // Round t: receive segment t from the previous process, pass segment t-1 on to the next.
  for (int t = 0; t <= segments; ++t) {
    if (v > 0 && t < segments) s.recv(segment(t), length(t), type, absolute(v - 1, root, size));
    if (v + 1 < size && t > 0) s.send(segment(t - 1), length(t - 1), type, absolute(v + 1, root, size));
    s.end_round();
  }
}

}  // namespace rangecomm::detail

namespace rangecomm {

namespace {

// Open MPI's shared-memory transport sends a message of up to 4 KiB including its header
// eagerly and a longer one only after the receiver has answered; on 8 ranks sharing 2 cores
// that answer waits for the receiver to be scheduled. Pieces of 4000 bytes keep every piece
// eager: 4-32 KiB broadcasts took 0.85-0.9x of the single-message tree's time (and native's)
// there; at 64 KiB the pieces no longer win. MPICH's eager size is larger and pieces made its
// 32-64 KiB broadcasts 1.2-1.6x slower on 2 ranks, so they are off there.
#if defined(OPEN_MPI)
constexpr long long kBcastPiecedBytes = 32768;
#else
constexpr long long kBcastPiecedBytes = 0;
#endif

int bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm, Request* request,
          const char* fn) {
  detail::RangeState* s = nullptr;
  int rc = detail::check_comm(comm, fn, &s);
  if (rc == MPI_SUCCESS) rc = detail::check_root(*s, root, fn);
  if (rc == MPI_SUCCESS) rc = detail::check_buffer(*s, count, type, fn);
  if (rc != MPI_SUCCESS) return rc;
  auto sched = detail::new_schedule();
  int type_size = 0;
  MPI_Type_size(type, &type_size);
  long long bytes = static_cast<long long>(count) * type_size;
  long long segment_bytes = std::max(1LL, detail::tuning("BCAST_SEGMENT_BYTES", 1 << 20));
  if (count == 0 || s->size == 1) {
    // nothing to send
  } else if (bytes < detail::tuning("BCAST_PIPELINE_BYTES", 8 << 20) || s->size == 2) {
    // Up to BCAST_PIECED_BYTES a message goes in pieces that each fit MPI's eager protocol:
    // a parent hands a piece over without waiting for its child to be ready to receive.
    int piece_count = 0;
    if (bytes <= detail::tuning("BCAST_PIECED_BYTES", kBcastPiecedBytes)) {
      long long piece_bytes = detail::tuning("BCAST_PIECE_BYTES", 4000);
      if (type_size > 0 && piece_bytes >= type_size && piece_bytes < bytes)
        piece_count = static_cast<int>(piece_bytes / type_size);
    }
    detail::add_bcast(*sched, buf, count, type, root, s->rank, s->size, piece_count);
  } else {
    int segment_count = static_cast<int>(std::max(1LL, segment_bytes / std::max(type_size, 1)));
    detail::add_chain_bcast(*sched, buf, count, type, root, s->rank, s->size, segment_count);
  }
  return detail::run(comm, std::move(sched), request);
}
}  // namespace

int Bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  return bcast(buf, count, type, root, comm, nullptr, "Bcast");
}

int Ibcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm,
           Request* request) {
  if (!request) return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Ibcast: request is null");
  return bcast(buf, count, type, root, comm, request, "Ibcast");
}

}  // namespace rangecomm
