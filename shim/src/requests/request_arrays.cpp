// The wait/test families over arrays that mix real, fake, null and complete requests, with
// MPI's semantics: Testall all-or-nothing, Waitany/Testany and Waitsome/Testsome indices,
// MPI_UNDEFINED when nothing is active, MPI_ERR_IN_STATUS, statuses at the right index.
// The real requests of an array are handed to MPI together (as one smaller array), so MPI's
// own rules (inactive persistent requests, errors per status) apply to them unchanged.
#include <vector>

#include "handles/errors.h"
#include "handles/handles.h"
#include "requests/requests.h"

using namespace rcshim;

namespace {

MPI_Status* status_at(MPI_Status statuses[], int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// One call's view of an array: its fake entries and its real requests gathered apart.
struct Mixed {
  int count = 0;
  bool any_fake = false;
  std::vector<FakeRequest*> fake;  // per index; null for real ones
  std::vector<int> real_index;     // index in the caller's array of each real request
  std::vector<MPI_Request> real;
  std::vector<MPI_Status> real_status;

  // Checks every fake handle; a dead one is an MPI_ERR_REQUEST error.
  int gather(int n, MPI_Request requests[], const char* fn) {
    count = n;
    fake.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      if (rc_is_fake_request(requests[i])) {
        any_fake = true;
        if (int rc = get_request(requests[i], fn, &fake[i])) return rc;
      } else {
        real_index.push_back(i);
        real.push_back(requests[i]);
      }
    }
    real_status.resize(real.size());
    return MPI_SUCCESS;
  }
  int nreal() const { return static_cast<int>(real.size()); }
  // Copies the real requests back (completed ones are now null) and their statuses.
  void scatter_real(MPI_Request requests[], MPI_Status statuses[], bool with_status) {
    for (int k = 0; k < nreal(); ++k) {
      requests[real_index[k]] = real[k];
      if (with_status && statuses != MPI_STATUSES_IGNORE) statuses[real_index[k]] = real_status[k];
    }
  }
  bool fake_active(int i) const { return fake[i] != nullptr && !inactive(*fake[i]); }
};

// Reports every fake request of m (all complete) into requests/statuses; returns the comm of
// the first that failed, or MPI_COMM_NULL.
bool report_all_fake(Mixed& m, MPI_Request requests[], MPI_Status statuses[], bool failed,
                     MPI_Comm* failed_comm) {
  for (int i = 0; i < m.count; ++i) {
    if (!m.fake[i]) continue;
    MPI_Status* st = status_at(statuses, i);
    if (inactive(*m.fake[i])) {
      if (st != MPI_STATUS_IGNORE) set_empty_status(st);
      continue;
    }
    MPI_Comm comm = m.fake[i]->comm;
    int rc = report(&requests[i], *m.fake[i], st, failed);
    if (rc != MPI_SUCCESS && *failed_comm == MPI_COMM_NULL) *failed_comm = comm;
  }
  return *failed_comm != MPI_COMM_NULL;
}

bool any_fake_failed(const Mixed& m) {
  for (int i = 0; i < m.count; ++i)
    if (m.fake_active(i) && m.fake[i]->rc != MPI_SUCCESS) return true;
  return false;
}

// The end of Waitall/Testall once everything is complete.
int complete_all(Mixed& m, MPI_Request requests[], MPI_Status statuses[], int real_rc) {
  bool failed = any_fake_failed(m) || real_rc == MPI_ERR_IN_STATUS;
  if (failed && real_rc == MPI_SUCCESS)
    for (MPI_Status& st : m.real_status) st.MPI_ERROR = MPI_SUCCESS;
  m.scatter_real(requests, statuses, true);
  MPI_Comm failed_comm = MPI_COMM_NULL;
  report_all_fake(m, requests, statuses, failed, &failed_comm);
  if (real_rc != MPI_SUCCESS && real_rc != MPI_ERR_IN_STATUS) return real_rc;
  if (!failed) return MPI_SUCCESS;
  if (failed_comm != MPI_COMM_NULL) return raise_on(failed_comm, MPI_ERR_IN_STATUS);
  return MPI_ERR_IN_STATUS;  // only real requests failed: MPI raised it already
}

}  // namespace

extern "C" int rc_hand_MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!rc_any_fake_request(count, requests) &&
      (!rangecomm::Progress_needed() || progress_rule_disabled()))
    return MPI_Waitall(count, requests, statuses);
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Waitall")) return rc;
  bool real_done = m.nreal() == 0;
  int real_rc = MPI_SUCCESS;
  Backoff backoff;
  for (;;) {
    bool fakes_done = true;
    for (int i = 0; i < count; ++i)
      if (m.fake_active(i) && !poll(*m.fake[i])) fakes_done = false;
    if (!real_done && fakes_done && !rangecomm::Progress_needed()) {
      Unlocked unlocked;  // only real requests left: MPI may block
      real_rc = MPI_Waitall(m.nreal(), m.real.data(), m.real_status.data());
      real_done = true;
    } else if (!real_done) {
      int flag = 0;
      real_rc = MPI_Testall(m.nreal(), m.real.data(), &flag, m.real_status.data());
      real_done = flag || real_rc != MPI_SUCCESS;
    }
    if (fakes_done && real_done) break;
    progress_locked();
    backoff.pause();
  }
  return complete_all(m, requests, statuses, real_rc);
}

// Nothing changes unless everything is complete: fake results stay cached in their entries,
// real requests are only looked at (MPI_Request_get_status) until all are done.
extern "C" int rc_hand_MPI_Testall(int count, MPI_Request requests[], int* flag,
                                   MPI_Status statuses[]) {
  if (!rc_any_fake_request(count, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Testall(count, requests, flag, statuses);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Testall")) return rc;
  *flag = 0;
  for (int i = 0; i < count; ++i)
    if (m.fake_active(i) && !poll(*m.fake[i])) return MPI_SUCCESS;
  for (MPI_Request r : m.real) {
    int done = 0;
    if (int rc = MPI_Request_get_status(r, &done, MPI_STATUS_IGNORE)) return rc;
    if (!done) return MPI_SUCCESS;
  }
  int real_flag = 1, real_rc = MPI_SUCCESS;
  if (m.nreal() > 0)
    real_rc = MPI_Testall(m.nreal(), m.real.data(), &real_flag, m.real_status.data());
  *flag = 1;
  return complete_all(m, requests, statuses, real_rc);
}

namespace {

// One pass of Waitany/Testany: *index is the completed request, MPI_UNDEFINED for none;
// *active tells whether any request was active.
int any_pass(Mixed& m, MPI_Request requests[], int* index, MPI_Status* status, bool* active) {
  *index = MPI_UNDEFINED;
  *active = false;
  for (int i = 0; i < m.count; ++i) {
    if (!m.fake_active(i)) continue;
    *active = true;
    if (!poll(*m.fake[i])) continue;
    *index = i;
    MPI_Comm comm = m.fake[i]->comm;
    return result(comm, report(&requests[i], *m.fake[i], status, false));
  }
  if (m.nreal() == 0) return MPI_SUCCESS;
  int k = MPI_UNDEFINED, flag = 0;
  int rc = MPI_Testany(m.nreal(), m.real.data(), &k, &flag, status);
  if (!flag || k != MPI_UNDEFINED) *active = true;
  if (k != MPI_UNDEFINED) {
    *index = m.real_index[k];
    requests[*index] = m.real[k];
  }
  return rc;
}

}  // namespace

extern "C" int rc_hand_MPI_Waitany(int count, MPI_Request requests[], int* index,
                                   MPI_Status* status) {
  if (!rc_any_fake_request(count, requests) &&
      (!rangecomm::Progress_needed() || progress_rule_disabled()))
    return MPI_Waitany(count, requests, index, status);
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Waitany")) return rc;
  Backoff backoff;
  for (;;) {
    bool active = false;
    int rc = any_pass(m, requests, index, status, &active);
    if (*index != MPI_UNDEFINED || rc != MPI_SUCCESS) return rc;
    if (!active) {
      if (status != MPI_STATUS_IGNORE) set_empty_status(status);
      return MPI_SUCCESS;
    }
    bool fake_active = false;
    for (int i = 0; i < count; ++i) fake_active |= m.fake_active(i);
    if (!fake_active && !rangecomm::Progress_needed()) {  // only real ones left: MPI may block
      int k = MPI_UNDEFINED;
      {
        Unlocked unlocked;
        rc = MPI_Waitany(m.nreal(), m.real.data(), &k, status);
      }
      if (k != MPI_UNDEFINED) {
        *index = m.real_index[k];
        requests[*index] = m.real[k];
      }
      return rc;
    }
    progress_locked();
    backoff.pause();
  }
}

extern "C" int rc_hand_MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                                   MPI_Status* status) {
  if (!rc_any_fake_request(count, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Testany(count, requests, index, flag, status);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Testany")) return rc;
  bool active = false;
  int rc = any_pass(m, requests, index, status, &active);
  *flag = *index != MPI_UNDEFINED || !active;
  if (!active && status != MPI_STATUS_IGNORE) set_empty_status(status);
  return rc;
}

namespace {

// One pass of Waitsome/Testsome. *outcount is MPI_UNDEFINED when nothing was active.
int some_pass(Mixed& m, MPI_Request requests[], int* outcount, int indices[],
              MPI_Status statuses[]) {
  // Real ones first, into the front of indices/statuses, as MPI would write them.
  int nreal_done = MPI_UNDEFINED, real_rc = MPI_SUCCESS;
  std::vector<int> real_indices(m.nreal());
  if (m.nreal() > 0)
    real_rc = MPI_Testsome(m.nreal(), m.real.data(), &nreal_done, real_indices.data(),
                           m.real_status.data());
  bool active = nreal_done != MPI_UNDEFINED;
  int out = 0;
  for (int j = 0; active && j < nreal_done; ++j) {
    int i = m.real_index[real_indices[j]];
    requests[i] = m.real[real_indices[j]];
    indices[out] = i;
    if (statuses != MPI_STATUSES_IGNORE) statuses[out] = m.real_status[j];
    ++out;
  }
  std::vector<int> fake_done;
  for (int i = 0; i < m.count; ++i) {
    if (!m.fake_active(i)) continue;
    active = true;
    if (poll(*m.fake[i])) fake_done.push_back(i);
  }
  bool failed = real_rc == MPI_ERR_IN_STATUS;
  for (int i : fake_done) failed |= m.fake[i]->rc != MPI_SUCCESS;
  if (failed && real_rc == MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
    for (int j = 0; j < out; ++j) statuses[j].MPI_ERROR = MPI_SUCCESS;
  MPI_Comm failed_comm = MPI_COMM_NULL;
  for (int i : fake_done) {
    MPI_Comm comm = m.fake[i]->comm;
    if (report(&requests[i], *m.fake[i], status_at(statuses, out), failed) != MPI_SUCCESS &&
        failed_comm == MPI_COMM_NULL)
      failed_comm = comm;
    indices[out++] = i;
  }
  *outcount = active ? out : MPI_UNDEFINED;
  if (real_rc != MPI_SUCCESS && real_rc != MPI_ERR_IN_STATUS) return real_rc;
  if (!failed) return MPI_SUCCESS;
  return failed_comm != MPI_COMM_NULL ? raise_on(failed_comm, MPI_ERR_IN_STATUS)
                                      : MPI_ERR_IN_STATUS;
}

}  // namespace

extern "C" int rc_hand_MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                                    int indices[], MPI_Status statuses[]) {
  if (!rc_any_fake_request(incount, requests) &&
      (!rangecomm::Progress_needed() || progress_rule_disabled()))
    return MPI_Waitsome(incount, requests, outcount, indices, statuses);
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(incount, requests, "MPI_Waitsome")) return rc;
  Backoff backoff;
  for (;;) {
    int rc = some_pass(m, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    progress_locked();
    backoff.pause();
  }
}

extern "C" int rc_hand_MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                                    int indices[], MPI_Status statuses[]) {
  if (!rc_any_fake_request(incount, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(incount, requests, "MPI_Testsome")) return rc;
  return some_pass(m, requests, outcount, indices, statuses);
}

#ifdef RC_HAVE_MPI_Request_get_status_all
// MPI 4.1's Request_get_status_all/any/some: Testall/Testany/Testsome that free nothing and make
// nothing inactive. A mixed array's real requests go to MPI together as one smaller array; the
// fake ones are looked at (poll keeps their results cached) one by one.

namespace {

// A completed (or inactive) fake request's status, as MPI_Request_get_status gives it.
void fake_status(MPI_Request h, MPI_Status* status) {
  int done = 0;
  rc_fake_MPI_Request_get_status(h, &done, status);
}

}  // namespace

extern "C" int rc_hand_MPI_Request_get_status_all(int count, MPI_Request requests[], int* flag,
                                                  MPI_Status statuses[]) {
  if (!rc_any_fake_request(count, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Request_get_status_all(count, requests, flag, statuses);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Request_get_status_all")) return rc;
  *flag = 0;
  for (int i = 0; i < count; ++i)
    if (m.fake_active(i) && !poll(*m.fake[i])) return MPI_SUCCESS;
  int real_flag = 1, rc = MPI_SUCCESS;
  if (m.nreal() > 0)
    rc = MPI_Request_get_status_all(m.nreal(), m.real.data(), &real_flag, m.real_status.data());
  if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || !real_flag) return rc;
  *flag = 1;
  if (statuses != MPI_STATUSES_IGNORE) {
    m.scatter_real(requests, statuses, true);
    for (int i = 0; i < count; ++i)
      if (m.fake[i]) fake_status(requests[i], &statuses[i]);
  }
  return rc;
}

extern "C" int rc_hand_MPI_Request_get_status_any(int count, MPI_Request requests[], int* index,
                                                  int* flag, MPI_Status* status) {
  if (!rc_any_fake_request(count, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Request_get_status_any(count, requests, index, flag, status);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(count, requests, "MPI_Request_get_status_any")) return rc;
  *index = MPI_UNDEFINED;
  *flag = 0;
  bool active = false;
  for (int i = 0; i < count; ++i) {
    if (!m.fake_active(i)) continue;
    active = true;
    if (!poll(*m.fake[i])) continue;
    *index = i;
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) fake_status(requests[i], status);
    return MPI_SUCCESS;
  }
  if (m.nreal() > 0) {
    int k = MPI_UNDEFINED, real_flag = 0;
    int rc = MPI_Request_get_status_any(m.nreal(), m.real.data(), &k, &real_flag, status);
    if (rc != MPI_SUCCESS) return rc;
    if (real_flag && k != MPI_UNDEFINED) {
      *index = m.real_index[k];
      *flag = 1;
      return MPI_SUCCESS;
    }
    active |= !real_flag;  // flag with MPI_UNDEFINED: none of them is active
  }
  if (!active) {  // nothing active at all: flag, MPI_UNDEFINED and an empty status
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) set_empty_status(status);
  }
  return MPI_SUCCESS;
}

extern "C" int rc_hand_MPI_Request_get_status_some(int incount, MPI_Request requests[],
                                                   int* outcount, int indices[],
                                                   MPI_Status statuses[]) {
  if (!rc_any_fake_request(incount, requests)) {
    if (rangecomm::Progress_needed()) progress_locked();
    return MPI_Request_get_status_some(incount, requests, outcount, indices, statuses);
  }
  Locked locked;  // from here on the library's state is read
  Mixed m;
  if (int rc = m.gather(incount, requests, "MPI_Request_get_status_some")) return rc;
  bool active = false;
  int out = 0;
  for (int i = 0; i < incount; ++i) {
    if (!m.fake_active(i)) continue;
    active = true;
    if (!poll(*m.fake[i])) continue;
    if (statuses != MPI_STATUSES_IGNORE) fake_status(requests[i], &statuses[out]);
    indices[out++] = i;
  }
  int rc = MPI_SUCCESS;
  if (m.nreal() > 0) {
    int k = MPI_UNDEFINED;
    std::vector<int> real_indices(m.real.size());
    rc = MPI_Request_get_status_some(m.nreal(), m.real.data(), &k, real_indices.data(),
                                     m.real_status.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (k != MPI_UNDEFINED) {
      active = true;
      for (int j = 0; j < k; ++j) {
        if (statuses != MPI_STATUSES_IGNORE) statuses[out] = m.real_status[j];
        indices[out++] = m.real_index[real_indices[j]];
      }
    }
  }
  *outcount = active ? out : MPI_UNDEFINED;
  return rc;
}
#endif  // RC_HAVE_MPI_Request_get_status_all
