// MPI 4.1's buffers attached to a communicator, and MPICH's stream and thread-communicator
// queries, on range communicators. Compiled where mpi.h declares them (RC_HAVE_ of real_mpi.h).
//
// Buffered sends on a range communicator copy their data into storage of the library's own and
// complete at once (point_to_point.cpp), so an attached buffer is never filled: attaching
// records it, detaching gives it back, and flushing has no message to wait for.
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "requests/requests.h"

using namespace rcshim;

#ifdef RC_HAVE_MPI_Comm_attach_buffer
namespace {

int attach(MPI_Comm comm, void* buffer, MPI_Count size, const char* fn) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, fn, &c)) return rc;
  if (size < 0)
    return raise_error(comm, MPI_ERR_ARG, "%s: size %lld is negative", fn,
                       static_cast<long long>(size));
  if (c->buffer_attached)  // the class MPICH gives (MPI names none)
    return raise_error(comm, MPI_ERR_OTHER, "%s: a buffer is already attached", fn);
  c->buffer = buffer;
  c->buffer_size = size;
  c->buffer_attached = true;
  return MPI_SUCCESS;
}

template <class Size>
int detach(MPI_Comm comm, void* buffer_addr, Size* size, const char* fn) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, fn, &c)) return rc;
  // With none attached: a null buffer of size 0, as MPICH gives.
  *static_cast<void**>(buffer_addr) = c->buffer;
  *size = static_cast<Size>(c->buffer_size);
  c->buffer = nullptr;
  c->buffer_size = 0;
  c->buffer_attached = false;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int rc_fake_MPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  return attach(comm, buffer, size, "MPI_Comm_attach_buffer");
}

extern "C" int rc_fake_MPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size) {
  return attach(comm, buffer, size, "MPI_Comm_attach_buffer_c");
}

extern "C" int rc_fake_MPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  return detach(comm, buffer_addr, size, "MPI_Comm_detach_buffer");
}

extern "C" int rc_fake_MPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr, MPI_Count* size) {
  return detach(comm, buffer_addr, size, "MPI_Comm_detach_buffer_c");
}

extern "C" int rc_fake_MPI_Comm_flush_buffer(MPI_Comm comm) {
  FakeComm* c = nullptr;
  return get_comm(comm, "MPI_Comm_flush_buffer", &c);
}

// A request that is complete at once (a send to MPI_PROC_NULL on the range).
extern "C" int rc_fake_MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  RC_FAKE_RANGE("MPI_Comm_iflush_buffer");
  return start_request(comm, request, "MPI_Comm_iflush_buffer", [&](rangecomm::Request* r) {
    return rangecomm::Isend(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, range, r);
  });
}
#endif  // RC_HAVE_MPI_Comm_attach_buffer

#ifdef RC_HAVE_MPIX_Comm_get_stream
// A range communicator is made without a stream, as MPI_Comm_dup makes one.
extern "C" int rc_fake_MPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream* stream) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPIX_Comm_get_stream", &c)) return rc;
  (void)idx;
  *stream = MPIX_STREAM_NULL;
  return MPI_SUCCESS;
}
#endif

#ifdef RC_HAVE_MPIX_Comm_test_threadcomm
extern "C" int rc_fake_MPIX_Comm_test_threadcomm(MPI_Comm comm, int* flag) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPIX_Comm_test_threadcomm", &c)) return rc;
  *flag = 0;
  return MPI_SUCCESS;
}
#endif
