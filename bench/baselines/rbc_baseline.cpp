// rbc_baseline.hpp on RBC's public calls; nothing of RBC is changed or copied here.
#include "rbc_baseline.hpp"

#include "rbc_c.h"

#include <RBC.hpp>

#include <utility>

namespace rbc_baseline {

struct Comm::Impl {
  RBC::Comm c;
};

Comm::Comm() : impl(std::make_unique<Impl>()) {}
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
bool Comm::is_null() const { return impl->c.isEmpty(); }
int Comm::rank() const { return impl->c.getRank(); }
int Comm::size() const { return impl->c.getSize(); }

int from_mpi(MPI_Comm mpi_comm, Comm* out) {
  return RBC::Create_Comm_from_MPI(mpi_comm, &out->impl->c);
}

int create(const Comm& parent, int first, int last, int stride, Comm* out) {
  return RBC::Comm_create_group(parent.impl->c, &out->impl->c, first, last, stride);
}

double create_batch(const Comm& parent, int first, int last, long count, bool kept) {
  const RBC::Comm& p = parent.impl->c;
  double t0 = MPI_Wtime();
  if (kept) {
    RBC::Comm c;
    for (long i = 0; i < count; ++i) RBC::Comm_create_group(p, &c, first, last);
  } else {
    for (long i = 0; i < count; ++i) {
      RBC::Comm c;
      RBC::Comm_create_group(p, &c, first, last);
    }
  }
  return MPI_Wtime() - t0;
}

int bcast(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  return RBC::Bcast(buf, count, type, root, comm.impl->c);
}

int reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root,
           const Comm& comm) {
  return RBC::Reduce(send, recv, count, type, op, root, comm.impl->c);
}

int allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
              const Comm& comm) {
  return RBC::Allreduce(send, recv, count, type, op, comm.impl->c);
}

int scan(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, const Comm& comm) {
  return RBC::Scan(send, recv, count, type, op, comm.impl->c);
}

int gather(const void* send, int count, MPI_Datatype type, void* recv, int root, const Comm& comm) {
  return RBC::Gather(send, count, type, recv, count, type, root, comm.impl->c);
}

int allgather(const void* send, int count, MPI_Datatype type, void* recv, const Comm& comm) {
  return RBC::Allgather(send, count, type, recv, count, type, comm.impl->c);
}

int alltoall(void* send, int count, MPI_Datatype type, void* recv, const Comm& comm) {
  return RBC::Alltoall(send, count, type, recv, count, type, comm.impl->c);
}

int barrier(const Comm& comm) { return RBC::Barrier(comm.impl->c); }

int send(const void* buf, int count, MPI_Datatype type, int dest, int tag, const Comm& comm) {
  return RBC::Send(buf, count, type, dest, tag, comm.impl->c);
}

int recv(void* buf, int count, MPI_Datatype type, int source, int tag, const Comm& comm) {
  return RBC::Recv(buf, count, type, source, tag, comm.impl->c, MPI_STATUS_IGNORE);
}

int ibcast_wait(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  RBC::Request req;
  int err = RBC::Ibcast(buf, count, type, root, comm.impl->c, &req);
  return err != MPI_SUCCESS ? err : RBC::Wait(&req, MPI_STATUS_IGNORE);
}

int ibcast_test(void* buf, int count, MPI_Datatype type, int root, const Comm& comm) {
  RBC::Request req;
  int err = RBC::Ibcast(buf, count, type, root, comm.impl->c, &req);
  for (int done = 0; err == MPI_SUCCESS && !done;) err = RBC::Test(&req, &done, MPI_STATUS_IGNORE);
  return err;
}

int iscan_wait(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
               const Comm& comm) {
  RBC::Request req;
  int err = RBC::Iscan(send, recv, count, type, op, comm.impl->c, &req);
  return err != MPI_SUCCESS ? err : RBC::Wait(&req, MPI_STATUS_IGNORE);
}

}  // namespace rbc_baseline

extern "C" double rbc_baseline_world_batch(int first, int last, long count) {
  rbc_baseline::Comm world;  // made locally (RBC asks MPI for rank and size only)
  rbc_baseline::from_mpi(MPI_COMM_WORLD, &world);
  return rbc_baseline::create_batch(world, first, last, count, false);
}
