// MPI_Wait and MPI_Test and friends on a single request: fake requests through core, real ones
// with the progress rule. The array forms are in request_arrays.cpp.
#include "handles/errors.h"
#include "handles/handles.h"
#include "requests/requests.h"

using namespace rcshim;

extern "C" int rc_fake_MPI_Wait(MPI_Request* request, MPI_Status* status) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(*request, "MPI_Wait", &r)) return rc;
  if (inactive(*r)) {
    if (status != MPI_STATUS_IGNORE) set_empty_status(status);
    return MPI_SUCCESS;
  }
  wait(*r);
  MPI_Comm comm = r->comm;
  return result(comm, report(request, *r, status, false));
}

extern "C" int rc_blocking_MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return wait_real(request, status);
}

extern "C" int rc_fake_MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(*request, "MPI_Test", &r)) return rc;
  *flag = 1;
  if (inactive(*r)) {
    if (status != MPI_STATUS_IGNORE) set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!poll(*r)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  MPI_Comm comm = r->comm;
  return result(comm, report(request, *r, status, false));
}

// A program that polls a real request must still move range operations along.
extern "C" int rc_blocking_MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  progress_locked();
  return MPI_Test(request, flag, status);
}

extern "C" int rc_fake_MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(request, "MPI_Request_get_status", &r)) return rc;
  *flag = 1;
  if (inactive(*r)) {
    if (status != MPI_STATUS_IGNORE) set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!poll(*r)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  if (status != MPI_STATUS_IGNORE) {
    int error_field = status->MPI_ERROR;
    *status = r->status;
    status->MPI_ERROR = error_field;
  }
  return MPI_SUCCESS;  // the request stays; its error is reported when it is completed
}

extern "C" int rc_blocking_MPI_Request_get_status(MPI_Request request, int* flag,
                                                  MPI_Status* status) {
  progress_locked();
  return MPI_Request_get_status(request, flag, status);
}

extern "C" int rc_hand_MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (rc_is_fake_request(request)) {
    Locked locked;
    return rc_fake_MPI_Request_get_status(request, flag, status);
  }
  if (rangecomm::Progress_needed()) progress_locked();
  return MPI_Request_get_status(request, flag, status);
}

extern "C" int rc_fake_MPI_Cancel(MPI_Request* request) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(*request, "MPI_Cancel", &r)) return rc;
  if (r->done || inactive(*r) || r->inner.is_null()) return MPI_SUCCESS;  // nothing to cancel
  return result(r->comm, rangecomm::Cancel(&r->inner));
}

// The operation goes on unseen; what it reads or writes stays alive until it completes.
extern "C" int rc_fake_MPI_Request_free(MPI_Request* request) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(*request, "MPI_Request_free", &r)) return rc;
  if (!r->done && !r->inner.is_null()) detach(std::move(*r));
  request_table().release(rc_fake_request_index(*request));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Start(MPI_Request* request) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(*request, "MPI_Start", &r)) return rc;
  if (!r->start)
    return raise_error(r->comm, MPI_ERR_REQUEST, "MPI_Start: the request is not persistent");
  if (r->active)
    return raise_error(r->comm, MPI_ERR_REQUEST, "MPI_Start: the request is already active");
  int rc = r->start(&r->inner);
  if (rc != MPI_SUCCESS) return result(r->comm, rc);
  r->active = true;
  r->done = false;
  return MPI_SUCCESS;
}

extern "C" int rc_hand_MPI_Startall(int count, MPI_Request requests[]) {
  if (count < 0) return raise_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Startall: count %d", count);
  for (int i = 0; i < count; ++i) {
    int rc = MPI_SUCCESS;
    if (rc_is_fake_request(requests[i])) {
      Locked locked;
      rc = rc_fake_MPI_Start(&requests[i]);
    } else {
      rc = MPI_Start(&requests[i]);
    }
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
