// The original RBC library (github.com/MichaelAxtmann/RBC) behind a narrow interface, so that
// the benchmark drivers can run it beside rangecomm in the same process and the same run
// without including its headers. Built only with -Drbc or -Dkadis (bench/baselines/meson.build),
// which also defines RANGECOMM_BENCH_RBC for the drivers.
//
// A Comm is an RBC::Comm. RBC's own creation calls are timed inside this file (create_batch),
// so that the measured loop is RBC's alone, as the drivers' loops for rangecomm are rangecomm's.
#pragma once

#include <mpi.h>

#include <memory>

namespace rbc_baseline {

class Comm {
 public:
  Comm();
  ~Comm();
  Comm(Comm&&) noexcept;
  Comm& operator=(Comm&&) noexcept;
  bool is_null() const;
  int rank() const;
  int size() const;

  struct Impl;
  std::unique_ptr<Impl> impl;
};

// RBC::Create_Comm_from_MPI with RBC's defaults (its own collectives on ranges of mpi_comm).
int from_mpi(MPI_Comm mpi_comm, Comm* out);
// RBC::Comm_create_group(parent, out, first, last, stride): local for such a parent.
int create(const Comm& parent, int first, int last, int stride, Comm* out);

// Seconds for `count` creations of the range first..last of parent:
//   fresh  each into a new RBC::Comm that is destroyed after it (as rangecomm's Split_Comm +
//          Comm_free in create_bench),
//   kept   each into the same RBC::Comm, which holds the previous one until it is replaced.
double create_batch(const Comm& parent, int first, int last, long count, bool kept);

// Blocking collectives and point-to-point, as RBC names them (int elements counted by count).
int bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm);
int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm);
int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm);
int scan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, const Comm& comm);
int gather(const void* send, int count, MPI_Datatype type, void* recv, int root, const Comm& comm);
int allgather(const void* send, int count, MPI_Datatype type, void* recv, const Comm& comm);
int alltoall(void* send, int count, MPI_Datatype type, void* recv, const Comm& comm);
int barrier(const Comm& comm);
int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm);
int recv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm);

// Nonblocking collectives started and completed by RBC::Wait (which spins on RBC's Test).
int ibcast_wait(void* buf, int count, MPI_Datatype type, int root, const Comm& comm);
// The same completed by a loop of RBC::Test.
int ibcast_test(void* buf, int count, MPI_Datatype type, int root, const Comm& comm);
int iscan_wait(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
               const Comm& comm);

}  // namespace rbc_baseline
