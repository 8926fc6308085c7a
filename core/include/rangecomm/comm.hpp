// Range communicators: a strided range first..last of a parent communicator, created locally.
#pragma once

#include <mpi.h>

#include <memory>

namespace rangecomm {

namespace detail {
struct RangeState;
struct CommAccess;
}  // namespace detail

// A communicator made of the ranks first, first+stride, ..., last of a parent.
//
// Comm is a cheap value: copies refer to the same communicator (like copies of an MPI_Comm
// handle). A default-constructed Comm is the null communicator. Every range is stored by its
// coordinates on the root MPI communicator it was ultimately made from, so a sub-range of a
// sub-range is again one (first, stride, size) triple, whatever the nesting.
class Comm {
 public:
  Comm() = default;

  bool is_null() const { return state_ == nullptr; }
  explicit operator bool() const { return !is_null(); }

  // This process's rank in the range, or MPI_UNDEFINED if it is not a member.
  int rank() const;
  int size() const;

  // Rank translation. Each returns MPI_UNDEFINED for a rank outside 0..size()-1.
  int rank_in_parent(int rank) const;
  int rank_in_root(int rank) const;
  // Inverse of rank_in_root: the rank of root rank `root_rank` here, or MPI_UNDEFINED.
  int rank_from_root(int root_rank) const;

  // Coordinates on the root communicator. A general group (Icomm_create_group) has no stride:
  // root_stride() is MPI_UNDEFINED and root_first() its first member's root rank.
  int root_first() const;
  int root_stride() const;
  // False for a general group, whose members are not evenly spaced on the root.
  bool is_strided_range() const;
  // Nesting depth: 0 for a communicator made by Create_Comm, parent depth + 1 for a split.
  int depth() const;

  // The MPI communicator passed to Create_Comm (not a duplicate). Errors are reported through
  // its error handler.
  MPI_Comm root_mpi_comm() const;

  // Identity: true when both handles refer to the same communicator object.
  friend bool operator==(const Comm& a, const Comm& b) { return a.state_ == b.state_; }
  friend bool operator!=(const Comm& a, const Comm& b) { return !(a == b); }

 private:
  friend struct detail::CommAccess;
  explicit Comm(std::shared_ptr<detail::RangeState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::RangeState> state_;
};

// Attach to an MPI communicator: the result spans all of it.
// Collective over mpi_comm, but only the first time a given communicator is attached by this
// process: it duplicates mpi_comm into private channels so that range traffic never meets the
// program's own traffic on mpi_comm, and asks MPI whether all its processes share one node
// (MPI_Comm_split_type, freed at once; it chooses the broadcast algorithm). Later calls with
// the same communicator are local and give the same range communicator (use
// Split_Comm(c, 0, size - 1, &d) for a separate one).
// mpi_comm must be an intracommunicator. The channels are freed when mpi_comm is freed or at
// MPI_Finalize (attribute delete callbacks), so there is nothing to tear down by hand.
int Create_Comm(MPI_Comm mpi_comm, Comm* out);

// Local, O(1), no communication: ranks first, first+stride, ..., <= last of parent (ranks of
// the parent). A process that is not a member receives the null communicator. Fails with
// MPI_ERR_ARG (stride < 1, first > last), MPI_ERR_RANK (outside the parent) or MPI_ERR_COMM
// (null parent, or a context clash with a live communicator; see docs/tag-layout.md). What *out
// held before is released first, so out may be the parent's own handle.
int Split_Comm(const Comm& parent, int first, int last, int stride, Comm* out);
inline int Split_Comm(const Comm& parent, int first, int last, Comm* out) {
  return Split_Comm(parent, first, last, 1, out);
}

// Like MPI_Error_string, but also knows the detailed message of the library's own codes (the
// latest one of each error class): MPICH 4.0 does not return strings added to codes of
// predefined classes. text must hold MPI_MAX_ERROR_STRING characters.
int Error_string(int code, char* text, int* length);

int Comm_rank(const Comm& comm, int* rank);
int Comm_size(const Comm& comm, int* size);

// Releases this handle (sets it to null). Pending operations on the communicator complete
// normally; its state goes when the last handle and the last operation are gone.
int Comm_free(Comm* comm);

}  // namespace rangecomm
