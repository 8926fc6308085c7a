// Request handles and the MPI completion calls over them.
#include "engine/progress.hpp"
#include "engine/request_access.hpp"
#include "util/errors.hpp"
#include "util/status.hpp"

namespace rangecomm {

using detail::Backoff;
using detail::RequestAccess;

namespace {

MPI_Status* or_ignore(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

void copy_status(MPI_Status* out, const MPI_Status& st) {
  if (out != MPI_STATUS_IGNORE) *out = st;
}

}  // namespace

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    take(other);
  }
  return *this;
}

void Request::take(Request& other) noexcept {
  kind_ = other.kind_;
  source_ = other.source_;
  tag_ = other.tag_;
  native_ = other.native_;
  op_ = other.op_;
  errcomm_ = other.errcomm_;
  other.kind_ = Kind::null;
  other.native_ = MPI_REQUEST_NULL;
  other.op_ = nullptr;
}

void Request::release() noexcept {
  if ((kind_ == Kind::native_send || kind_ == Kind::native_recv) && native_ != MPI_REQUEST_NULL)
    MPI_Request_free(&native_);
  if (kind_ == Kind::op) detail::adopt_orphan(op_);  // passes our reference on
  kind_ = Kind::null;
  native_ = MPI_REQUEST_NULL;
  op_ = nullptr;
}

namespace detail {

bool RequestAccess::test(Request& r, MPI_Status* status, int* rc) {
  MPI_Comm errcomm = r.errcomm_;
  bool done = complete(r, status, rc);
  if (done && *rc != MPI_SUCCESS) call_handler(errcomm, *rc);
  return done;
}

bool RequestAccess::complete(Request& r, MPI_Status* status, int* rc) {
  *rc = MPI_SUCCESS;
  switch (r.kind_) {
    case Request::Kind::null:
      set_empty_status(status);
      return true;
    case Request::Kind::done:
      set_status(status, r.source_, r.tag_, 0, MPI_SUCCESS);
      r.kind_ = Request::Kind::null;
      return true;
    case Request::Kind::native_send:
    case Request::Kind::native_recv: {
      int flag = 0;
      *rc = MPI_Test(&r.native_, &flag, status);
      if (!flag && *rc == MPI_SUCCESS) return false;
      int cancelled = 0;
      MPI_Test_cancelled(status, &cancelled);
      if (r.kind_ == Request::Kind::native_recv && !cancelled) {
        status->MPI_SOURCE = r.source_;
        status->MPI_TAG = r.tag_;
      }
      r.kind_ = Request::Kind::null;
      r.native_ = MPI_REQUEST_NULL;
      return true;
    }
    case Request::Kind::op:
      if (!r.op_->test(status, rc)) return false;
      r.op_->unref();
      r.op_ = nullptr;
      r.kind_ = Request::Kind::null;
      return true;
  }
  return false;
}

bool RequestAccess::wait_native(Request& r, MPI_Status* status, int* rc) {
  if (r.kind_ != Request::Kind::native_send && r.kind_ != Request::Kind::native_recv) return false;
  *rc = MPI_Wait(&r.native_, status);
  int cancelled = 0;
  MPI_Test_cancelled(status, &cancelled);
  if (r.kind_ == Request::Kind::native_recv && !cancelled) {
    status->MPI_SOURCE = r.source_;
    status->MPI_TAG = r.tag_;
  }
  r.kind_ = Request::Kind::null;
  return true;
}

bool RequestAccess::is_complete(Request& r) {
  MPI_Status st;
  int flag = 1;
  int rc = MPI_SUCCESS;
  if (r.kind_ == Request::Kind::native_send || r.kind_ == Request::Kind::native_recv)
    MPI_Request_get_status(r.native_, &flag, &st);
  else if (r.kind_ == Request::Kind::op)
    flag = r.op_->test(&st, &rc);
  return flag != 0;
}

void RequestAccess::cancel(Request& r) {
  if (r.kind_ == Request::Kind::native_send || r.kind_ == Request::Kind::native_recv)
    MPI_Cancel(&r.native_);
  else if (r.kind_ == Request::Kind::op)
    r.op_->cancel();
}

}  // namespace detail

int Progress() {
  detail::progress();
  return MPI_SUCCESS;
}

int Wait(Request* request, MPI_Status* status) {
  if (request == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Wait: request is null");
  MPI_Status st;
  int rc = MPI_SUCCESS;
  // Nothing of the library's own to advance: let MPI block (and yield) the way it likes.
  MPI_Comm errcomm = RequestAccess::errcomm(*request);
  if (!detail::engine_busy() && RequestAccess::wait_native(*request, &st, &rc)) {
    if (rc != MPI_SUCCESS) detail::call_handler(errcomm, rc);
    copy_status(status, st);
    return rc;
  }
  Backoff backoff;
  while (!RequestAccess::test(*request, &st, &rc)) {
    detail::progress();
    backoff.pause();
  }
  copy_status(status, st);
  return rc;
}

int Test(Request* request, int* flag, MPI_Status* status) {
  if (request == nullptr || flag == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Test: null argument");
  detail::progress();
  MPI_Status st;
  int rc = MPI_SUCCESS;
  *flag = RequestAccess::test(*request, &st, &rc);
  if (*flag) copy_status(status, st);
  return rc;
}

int Waitall(int count, Request requests[], MPI_Status statuses[]) {
  if (count < 0) return detail::raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "Waitall: count %d", count);
  // Waiting on each in turn completes all of them: every Wait advances every operation.
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status st;
    st.MPI_ERROR = Wait(&requests[i], &st);
    failed |= st.MPI_ERROR != MPI_SUCCESS;
    copy_status(or_ignore(statuses, i), st);
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int Testall(int count, Request requests[], int* flag, MPI_Status statuses[]) {
  if (count < 0 || flag == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Testall: bad count or flag");
  detail::progress();
  // MPI: unless all are complete, no request is modified. Completion is idempotent on the
  // library's operations and checked with MPI_Request_get_status on MPI's own.
  for (int i = 0; i < count; ++i) {
    if (!RequestAccess::is_complete(requests[i])) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status st;
    int rc = MPI_SUCCESS;
    RequestAccess::test(requests[i], &st, &rc);
    st.MPI_ERROR = rc;
    failed |= rc != MPI_SUCCESS;
    copy_status(or_ignore(statuses, i), st);
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

namespace {

// One pass over requests: the first active one that is complete, or MPI_UNDEFINED.
// *active tells whether any request was non-null.
int complete_any(int count, Request requests[], MPI_Status* st, int* rc, bool* active) {
  *active = false;
  for (int i = 0; i < count; ++i) {
    if (requests[i].is_null()) continue;
    *active = true;
    if (RequestAccess::test(requests[i], st, rc)) return i;
  }
  return MPI_UNDEFINED;
}

// One pass completing every complete request; returns how many, or MPI_UNDEFINED when none
// was active.
int complete_some(int count, Request requests[], int indices[], MPI_Status statuses[],
                  bool* failed) {
  int done = 0;
  bool active = false;
  for (int i = 0; i < count; ++i) {
    if (requests[i].is_null()) continue;
    active = true;
    MPI_Status st;
    int rc = MPI_SUCCESS;
    if (!RequestAccess::test(requests[i], &st, &rc)) continue;
    st.MPI_ERROR = rc;
    *failed |= rc != MPI_SUCCESS;
    copy_status(or_ignore(statuses, done), st);
    indices[done++] = i;
  }
  return active ? done : MPI_UNDEFINED;
}

}  // namespace

int Waitany(int count, Request requests[], int* index, MPI_Status* status) {
  if (count < 0 || index == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Waitany: bad count or index");
  Backoff backoff;
  for (;;) {
    MPI_Status st;
    int rc = MPI_SUCCESS;
    bool active = false;
    *index = complete_any(count, requests, &st, &rc, &active);
    if (!active) detail::set_empty_status(&st);
    if (*index != MPI_UNDEFINED || !active) {
      copy_status(status, st);
      return rc;
    }
    detail::progress();
    backoff.pause();
  }
}

int Testany(int count, Request requests[], int* index, int* flag, MPI_Status* status) {
  if (count < 0 || index == nullptr || flag == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Testany: bad count, index or flag");
  detail::progress();
  MPI_Status st;
  int rc = MPI_SUCCESS;
  bool active = false;
  *index = complete_any(count, requests, &st, &rc, &active);
  *flag = *index != MPI_UNDEFINED || !active;
  if (!active) detail::set_empty_status(&st);
  if (*flag) copy_status(status, st);
  return rc;
}

int Waitsome(int count, Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (count < 0 || outcount == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Waitsome: bad count or outcount");
  Backoff backoff;
  bool failed = false;
  while ((*outcount = complete_some(count, requests, indices, statuses, &failed)) == 0) {
    detail::progress();
    backoff.pause();
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int Testsome(int count, Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (count < 0 || outcount == nullptr)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Testsome: bad count or outcount");
  detail::progress();
  bool failed = false;
  *outcount = complete_some(count, requests, indices, statuses, &failed);
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int Cancel(Request* request) {
  if (request == nullptr || request->is_null())
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Cancel: null request");
  RequestAccess::cancel(*request);
  return MPI_SUCCESS;
}

int Request_free(Request* request) {
  if (request == nullptr || request->is_null())
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "Request_free: null request");
  *request = Request();
  return MPI_SUCCESS;
}

}  // namespace rangecomm
