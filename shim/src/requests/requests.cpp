// The life of a fake request: advanced by core, its result kept until the program is told,
// then freed (one-shot) or made inactive (persistent). Also the wait on a real request that
// keeps range operations moving.
#include <sched.h>

#include <cstdlib>
#include <list>

#include "handles/handles.h"
#include "requests/requests.h"

namespace rcshim {

void set_empty_status(MPI_Status* st) {
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements_x(st, MPI_BYTE, 0);
  MPI_Status_set_cancelled(st, 0);
}

namespace {

// Records the outcome of r's operation; runs its completion step once.
void finish(FakeRequest& r, int rc, const MPI_Status& st) {
  r.status = st;
  if (r.partitioned) partitioned_status(r);
  if (rc == MPI_SUCCESS && r.on_complete) rc = r.on_complete();
  r.on_complete = nullptr;
  r.rc = rc;
  r.done = true;
}

std::list<FakeRequest>& detached() {
  static std::list<FakeRequest> list;
  return list;
}

}  // namespace

bool poll(FakeRequest& r) {
  if (r.done) return true;
  if (r.partitioned && partitioned_held(r)) {  // nothing sent yet: keep the rest moving
    rangecomm::Progress();
    return false;
  }
  int flag = 0;
  MPI_Status st;
  int rc = rangecomm::Test(&r.inner, &flag, &st);
  if (!flag) return false;
  finish(r, rc, st);
  return true;
}

void wait(FakeRequest& r) {
  if (r.partitioned) {  // a partitioned send waits for its last MPI_Pready (from another thread)
    Backoff backoff;
    while (!r.done && partitioned_held(r)) {
      rangecomm::Progress();
      backoff.pause();
    }
  }
  if (r.done) return;
  MPI_Status st;
  int rc = rangecomm::Wait(&r.inner, &st);
  finish(r, rc, st);
}

int report(MPI_Request* h, FakeRequest& r, MPI_Status* status, bool set_error_field) {
  int rc = r.rc;
  if (status != MPI_STATUS_IGNORE) {
    int error_field = status->MPI_ERROR;
    *status = r.status;
    status->MPI_ERROR = set_error_field ? rc : error_field;
  }
  if (r.start) {
    r.active = false;
    r.done = false;
    r.rc = MPI_SUCCESS;
  } else {
    request_table().release(rc_fake_request_index(*h));
    *h = MPI_REQUEST_NULL;
  }
  return rc;
}

bool progress_rule_disabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("RANGECOMM_SHIM_NO_PROGRESS_RULE");
    return v != nullptr && v[0] == '1';
  }();
  return disabled;
}

int wait_real(MPI_Request* request, MPI_Status* status) {
  Backoff backoff;
  while (rangecomm::Progress_needed() && !progress_rule_disabled()) {
    int flag = 0;
    int rc = MPI_Test(request, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    progress_locked();
    backoff.pause();
  }
  return MPI_Wait(request, status);  // nothing of ours needs us: let MPI block its own way
}

void detach(FakeRequest&& r) {
  r.start = nullptr;
  detached().push_back(std::move(r));
}

void sweep_detached() {
  auto& list = detached();
  for (auto it = list.begin(); it != list.end();) {
    if (poll(*it))
      it = list.erase(it);
    else
      ++it;
  }
}

void finish_detached() {
  for (FakeRequest& r : detached()) wait(r);
  detached().clear();
}

}  // namespace rcshim
