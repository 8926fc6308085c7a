// Blocking calls that are collective, or otherwise have no nonblocking form that matches what
// the other processes call, keep running as they are while range operations need progress;
// a helper thread advances core meanwhile, when MPI allows two threads in it at once
// (MPI_THREAD_MULTIPLE). Without that, these calls do not advance range operations (see
// docs/shim-design.md, "The progress rule"). One definition per call the generated wrappers
// mark blocking; the list is the one Open MPI 4.1 and MPICH 4.0 share.
#include "accelerate.h"
#include "creation.h"
#include "errors.h"
#include "handles.h"
#include "progress_helper.h"

using namespace rcshim;

#define RC_HELPED(call) return with_progress_thread([&] { return call; })

extern "C" int rc_blocking_MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm) {
  RC_HELPED(MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void* recvbuf, const int recvcounts[], const int displs[],
                                          MPI_Datatype recvtype, MPI_Comm comm) {
  RC_HELPED(
      MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_HELPED(MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

extern "C" int rc_blocking_MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm) {
  RC_HELPED(MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int rdispls[],
                                         MPI_Datatype recvtype, MPI_Comm comm) {
  RC_HELPED(MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm));
}

extern "C" int rc_blocking_MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                                         const int sdispls[], const MPI_Datatype sendtypes[],
                                         void* recvbuf, const int recvcounts[], const int rdispls[],
                                         const MPI_Datatype recvtypes[], MPI_Comm comm) {
  RC_HELPED(MPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm));
}

extern "C" int rc_blocking_MPI_Barrier(MPI_Comm comm) { RC_HELPED(MPI_Barrier(comm)); }

extern "C" int rc_blocking_MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root,
                                     MPI_Comm comm) {
  RC_HELPED(MPI_Bcast(buffer, count, datatype, root, comm));
}

extern "C" int rc_blocking_MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                                           const int periods[], int reorder, MPI_Comm* comm_cart) {
  RC_HELPED(MPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}

extern "C" int rc_blocking_MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  RC_HELPED(MPI_Cart_sub(comm, remain_dims, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_accept(const char* port_name, MPI_Info info, int root,
                                           MPI_Comm comm, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_accept(port_name, info, root, comm, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_connect(const char* port_name, MPI_Info info, int root,
                                            MPI_Comm comm, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_connect(port_name, info, root, comm, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_create(comm, group, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                                 MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_create_group(comm, group, tag, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_disconnect(MPI_Comm* comm) {
  RC_HELPED(MPI_Comm_disconnect(comm));
}

extern "C" int rc_blocking_MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_dup(comm, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_dup_with_info(comm, info, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_join(int fd, MPI_Comm* intercomm) {
  RC_HELPED(MPI_Comm_join(fd, intercomm));
}

extern "C" int rc_blocking_MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  RC_HELPED(MPI_Comm_set_info(comm, info));
}

extern "C" int rc_blocking_MPI_Comm_spawn(const char* command, char* argv[], int maxprocs,
                                          MPI_Info info, int root, MPI_Comm comm,
                                          MPI_Comm* intercomm, int array_of_errcodes[]) {
  RC_HELPED(
      MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes));
}

extern "C" int rc_blocking_MPI_Comm_spawn_multiple(int count, char* array_of_commands[],
                                                   char** array_of_argv[],
                                                   const int array_of_maxprocs[],
                                                   const MPI_Info array_of_info[], int root,
                                                   MPI_Comm comm, MPI_Comm* intercomm,
                                                   int array_of_errcodes[]) {
  RC_HELPED(MPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs,
                                    array_of_info, root, comm, intercomm, array_of_errcodes));
}

extern "C" int rc_blocking_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_split(comm, color, key, newcomm));
}

extern "C" int rc_blocking_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
                                               MPI_Info info, MPI_Comm* newcomm) {
  RC_HELPED(MPI_Comm_split_type(comm, split_type, key, info, newcomm));
}

extern "C" int rc_blocking_MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                                 const int degrees[], const int destinations[],
                                                 const int weights[], MPI_Info info, int reorder,
                                                 MPI_Comm* comm_dist_graph) {
  RC_HELPED(MPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                  reorder, comm_dist_graph));
}

extern "C" int rc_blocking_MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                                          const int sources[],
                                                          const int sourceweights[], int outdegree,
                                                          const int destinations[],
                                                          const int destweights[], MPI_Info info,
                                                          int reorder, MPI_Comm* comm_dist_graph) {
  RC_HELPED(MPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                           destinations, destweights, info, reorder,
                                           comm_dist_graph));
}

extern "C" int rc_blocking_MPI_Exscan(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_HELPED(MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

extern "C" int rc_blocking_MPI_File_close(MPI_File* fh) { RC_HELPED(MPI_File_close(fh)); }

extern "C" int rc_blocking_MPI_File_open(MPI_Comm comm, const char* filename, int amode,
                                         MPI_Info info, MPI_File* fh) {
  RC_HELPED(MPI_File_open(comm, filename, amode, info, fh));
}

extern "C" int rc_blocking_MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  RC_HELPED(MPI_File_preallocate(fh, size));
}

extern "C" int rc_blocking_MPI_File_read_all(MPI_File fh, void* buf, int count,
                                             MPI_Datatype datatype, MPI_Status* status) {
  RC_HELPED(MPI_File_read_all(fh, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_read_all_begin(MPI_File fh, void* buf, int count,
                                                   MPI_Datatype datatype) {
  RC_HELPED(MPI_File_read_all_begin(fh, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  RC_HELPED(MPI_File_read_all_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf,
                                                int count, MPI_Datatype datatype,
                                                MPI_Status* status) {
  RC_HELPED(MPI_File_read_at_all(fh, offset, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf,
                                                      int count, MPI_Datatype datatype) {
  RC_HELPED(MPI_File_read_at_all_begin(fh, offset, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  RC_HELPED(MPI_File_read_at_all_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_File_read_ordered(MPI_File fh, void* buf, int count,
                                                 MPI_Datatype datatype, MPI_Status* status) {
  RC_HELPED(MPI_File_read_ordered(fh, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count,
                                                       MPI_Datatype datatype) {
  RC_HELPED(MPI_File_read_ordered_begin(fh, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  RC_HELPED(MPI_File_read_ordered_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  RC_HELPED(MPI_File_seek_shared(fh, offset, whence));
}

extern "C" int rc_blocking_MPI_File_set_atomicity(MPI_File fh, int flag) {
  RC_HELPED(MPI_File_set_atomicity(fh, flag));
}

extern "C" int rc_blocking_MPI_File_set_info(MPI_File fh, MPI_Info info) {
  RC_HELPED(MPI_File_set_info(fh, info));
}

extern "C" int rc_blocking_MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  RC_HELPED(MPI_File_set_size(fh, size));
}

extern "C" int rc_blocking_MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                             MPI_Datatype filetype, const char* datarep,
                                             MPI_Info info) {
  RC_HELPED(MPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

extern "C" int rc_blocking_MPI_File_sync(MPI_File fh) { RC_HELPED(MPI_File_sync(fh)); }

extern "C" int rc_blocking_MPI_File_write_all(MPI_File fh, const void* buf, int count,
                                              MPI_Datatype datatype, MPI_Status* status) {
  RC_HELPED(MPI_File_write_all(fh, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_write_all_begin(MPI_File fh, const void* buf, int count,
                                                    MPI_Datatype datatype) {
  RC_HELPED(MPI_File_write_all_begin(fh, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_write_all_end(MPI_File fh, const void* buf,
                                                  MPI_Status* status) {
  RC_HELPED(MPI_File_write_all_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf,
                                                 int count, MPI_Datatype datatype,
                                                 MPI_Status* status) {
  RC_HELPED(MPI_File_write_at_all(fh, offset, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
                                                       const void* buf, int count,
                                                       MPI_Datatype datatype) {
  RC_HELPED(MPI_File_write_at_all_begin(fh, offset, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_write_at_all_end(MPI_File fh, const void* buf,
                                                     MPI_Status* status) {
  RC_HELPED(MPI_File_write_at_all_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_File_write_ordered(MPI_File fh, const void* buf, int count,
                                                  MPI_Datatype datatype, MPI_Status* status) {
  RC_HELPED(MPI_File_write_ordered(fh, buf, count, datatype, status));
}

extern "C" int rc_blocking_MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count,
                                                        MPI_Datatype datatype) {
  RC_HELPED(MPI_File_write_ordered_begin(fh, buf, count, datatype));
}

extern "C" int rc_blocking_MPI_File_write_ordered_end(MPI_File fh, const void* buf,
                                                      MPI_Status* status) {
  RC_HELPED(MPI_File_write_ordered_end(fh, buf, status));
}

extern "C" int rc_blocking_MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                      MPI_Comm comm) {
  RC_HELPED(MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

extern "C" int rc_blocking_MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, int root, MPI_Comm comm) {
  RC_HELPED(
      MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm));
}

extern "C" int rc_blocking_MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[],
                                            const int edges[], int reorder, MPI_Comm* comm_graph) {
  RC_HELPED(MPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph));
}

extern "C" int rc_blocking_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                                                MPI_Comm peer_comm, int remote_leader, int tag,
                                                MPI_Comm* newintercomm) {
  RC_HELPED(
      MPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm));
}

extern "C" int rc_blocking_MPI_Intercomm_merge(MPI_Comm intercomm, int high,
                                               MPI_Comm* newintracomm) {
  RC_HELPED(MPI_Intercomm_merge(intercomm, high, newintracomm));
}

extern "C" int rc_blocking_MPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void* recvbuf,
                                                  int recvcount, MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  RC_HELPED(
      MPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                                                   MPI_Datatype sendtype, void* recvbuf,
                                                   const int recvcounts[], const int displs[],
                                                   MPI_Datatype recvtype, MPI_Comm comm) {
  RC_HELPED(MPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm));
}

extern "C" int rc_blocking_MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                                                 MPI_Datatype sendtype, void* recvbuf,
                                                 int recvcount, MPI_Datatype recvtype,
                                                 MPI_Comm comm) {
  RC_HELPED(
      MPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                                  const int sdispls[], MPI_Datatype sendtype,
                                                  void* recvbuf, const int recvcounts[],
                                                  const int rdispls[], MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  RC_HELPED(MPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm));
}

extern "C" int rc_blocking_MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                                  const MPI_Aint sdispls[],
                                                  const MPI_Datatype sendtypes[], void* recvbuf,
                                                  const int recvcounts[], const MPI_Aint rdispls[],
                                                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  RC_HELPED(MPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm));
}

extern "C" int rc_blocking_MPI_Reduce(const void* sendbuf, void* recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  RC_HELPED(MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

extern "C" int rc_blocking_MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                                              const int recvcounts[], MPI_Datatype datatype,
                                              MPI_Op op, MPI_Comm comm) {
  RC_HELPED(MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

extern "C" int rc_blocking_MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf,
                                                    int recvcount, MPI_Datatype datatype, MPI_Op op,
                                                    MPI_Comm comm) {
  RC_HELPED(MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

extern "C" int rc_blocking_MPI_Scan(const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  RC_HELPED(MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

extern "C" int rc_blocking_MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       int root, MPI_Comm comm) {
  RC_HELPED(MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

extern "C" int rc_blocking_MPI_Scatterv(const void* sendbuf, const int sendcounts[],
                                        const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, int root,
                                        MPI_Comm comm) {
  RC_HELPED(MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm));
}

extern "C" int rc_blocking_MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                                                int dest, int sendtag, int source, int recvtag,
                                                MPI_Comm comm, MPI_Status* status) {
  RC_HELPED(
      MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status));
}

extern "C" int rc_blocking_MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                                            MPI_Comm comm, void* baseptr, MPI_Win* win) {
  RC_HELPED(MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win));
}

extern "C" int rc_blocking_MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                                                   MPI_Comm comm, void* baseptr, MPI_Win* win) {
  RC_HELPED(MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win));
}

extern "C" int rc_blocking_MPI_Win_complete(MPI_Win win) { RC_HELPED(MPI_Win_complete(win)); }

extern "C" int rc_blocking_MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                                          MPI_Comm comm, MPI_Win* win) {
  RC_HELPED(MPI_Win_create(base, size, disp_unit, info, comm, win));
}

extern "C" int rc_blocking_MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  RC_HELPED(MPI_Win_create_dynamic(info, comm, win));
}

extern "C" int rc_blocking_MPI_Win_fence(int assert, MPI_Win win) {
  RC_HELPED(MPI_Win_fence(assert, win));
}

extern "C" int rc_blocking_MPI_Win_flush(int rank, MPI_Win win) {
  RC_HELPED(MPI_Win_flush(rank, win));
}

extern "C" int rc_blocking_MPI_Win_flush_all(MPI_Win win) { RC_HELPED(MPI_Win_flush_all(win)); }

extern "C" int rc_blocking_MPI_Win_flush_local(int rank, MPI_Win win) {
  RC_HELPED(MPI_Win_flush_local(rank, win));
}

extern "C" int rc_blocking_MPI_Win_flush_local_all(MPI_Win win) {
  RC_HELPED(MPI_Win_flush_local_all(win));
}

extern "C" int rc_blocking_MPI_Win_free(MPI_Win* win) { RC_HELPED(MPI_Win_free(win)); }

extern "C" int rc_blocking_MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  RC_HELPED(MPI_Win_lock(lock_type, rank, assert, win));
}

extern "C" int rc_blocking_MPI_Win_lock_all(int assert, MPI_Win win) {
  RC_HELPED(MPI_Win_lock_all(assert, win));
}

extern "C" int rc_blocking_MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  RC_HELPED(MPI_Win_post(group, assert, win));
}

extern "C" int rc_blocking_MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  RC_HELPED(MPI_Win_start(group, assert, win));
}

extern "C" int rc_blocking_MPI_Win_test(MPI_Win win, int* flag) {
  RC_HELPED(MPI_Win_test(win, flag));
}

extern "C" int rc_blocking_MPI_Win_unlock(int rank, MPI_Win win) {
  RC_HELPED(MPI_Win_unlock(rank, win));
}

extern "C" int rc_blocking_MPI_Win_unlock_all(MPI_Win win) { RC_HELPED(MPI_Win_unlock_all(win)); }

extern "C" int rc_blocking_MPI_Win_wait(MPI_Win win) { RC_HELPED(MPI_Win_wait(win)); }
