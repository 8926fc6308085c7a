// What every collective shares: argument checks and running a schedule blocking or not.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <memory>

#include "../errors.hpp"
#include "../schedule.hpp"
#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm::detail {

// Checks the communicator; *out is its state on success.
int check_comm(const Comm& comm, const char* fn, RangeState** out);
int check_root(const RangeState& s, int root, const char* fn);
int check_buffer(const RangeState& s, int count, MPI_Datatype type, const char* fn);
int check_op(const RangeState& s, MPI_Op op, const char* fn);
// check_comm + check_buffer + check_op.
int check_reduction(const Comm& comm, int count, MPI_Datatype type, MPI_Op op, const char* fn,
                    RangeState** s);

// Starts the schedule; waits for it when request is null (a blocking collective).
int run(const Comm& comm, SchedulePtr schedule, Request* request);

// Address of element `index` of a buffer of `type`.
inline char* block_at(void* buf, long long index, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  return static_cast<char*>(buf) + index * extent;
}
inline const char* block_at(const void* buf, long long index, MPI_Datatype type) {
  return block_at(const_cast<void*>(buf), index, type);
}

inline long long bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  MPI_Type_size(type, &size);
  return static_cast<long long>(count) * size;
}

// The binomial tree on ranks relative to the root: v's parent is v without its lowest set bit;
// its children are v + m for powers of two m below that bit; v's subtree is v .. v + span - 1.
inline int lowest_bit(int v, int size) { return v == 0 ? size : (v & -v); }
inline int subtree_span(int v, int size) { return std::min(lowest_bit(v, size), size - v); }

// Rank arithmetic relative to a root.
inline int relative(int rank, int root, int size) { return (rank - root + size) % size; }
inline int absolute(int rel, int root, int size) { return (rel + root) % size; }

// Appends a binomial-tree broadcast of buf from root.
void add_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root, int rank, int size);
// A buffer of count elements cut into `parts` blocks whose sizes differ by at most one.
class Blocks {
 public:
  Blocks(void* buf, int count, MPI_Datatype type, int parts) : buf_(static_cast<char*>(buf)), count_(count), parts_(parts) {
    MPI_Aint lb = 0;
    MPI_Type_get_extent(type, &lb, &extent_);
  }
  long long first(int b) const { return static_cast<long long>(count_) * b / parts_; }
  int length(int b) const { return static_cast<int>(first(b + 1) - first(b)); }
  char* at(int b) const { return buf_ + first(b) * extent_; }
  int largest() const { return length(parts_ - 1); }

 private:
  char* buf_;
  int count_, parts_;
  MPI_Aint extent_ = 0;
};

// Appends a ring reduce-scatter over the blocks of buf (a commutative op): p - 1 steps, after
// which block (rank + 1) % size of buf holds the full reduction of that block.
void add_ring_reduce_scatter(Schedule& s, const Blocks& blocks, MPI_Datatype type, MPI_Op op,
                             int rank, int size);

// Appends a pipelined chain broadcast in segments of segment_count elements.
void add_chain_bcast(Schedule& s, void* buf, int count, MPI_Datatype type, int root, int rank,
                     int size, int segment_count);
// Appends a binomial-tree reduction to root (rank order kept for non-commutative ops); on the
// root the result lands in recvbuf. sendbuf may equal recvbuf on the root (in place).
void add_reduce(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                MPI_Op op, int root, int rank, int size);

}  // namespace rangecomm::detail
