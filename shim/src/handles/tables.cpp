// The three tables of fake objects and the calls that add, find and remove entries.
#include <cstdlib>

#include "comms/fallback.h"
#include "comms/hints.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "rangecomm/embedding.hpp"
#include "requests/requests.h"

namespace rcshim {

// Built before main (nothing of MPI runs earlier), so the accessors need no guard.
FakeHandleTable<FakeComm> g_comm_table(RC_FAKE_COMM_INDEX_LIMIT - 1);
FakeHandleTable<FakeRequest> g_request_table(RC_FAKE_REQUEST_INDEX_LIMIT - 1);
FakeHandleTable<FakeMessage> g_message_table(RC_FAKE_MESSAGE_INDEX_LIMIT - 1);

int get_comm(MPI_Comm h, const char* fn, FakeComm** out) {
  *out = find_comm(h);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error(MPI_COMM_WORLD, MPI_ERR_COMM,
                     "%s: communicator %#llx is a range communicator that was freed (or never "
                     "existed)",
                     fn, handle_value(h));
}

int get_request(MPI_Request h, const char* fn, FakeRequest** out) {
  *out = find_request(h);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                     "%s: request %#llx is a range request that was completed or freed (or never "
                     "existed)",
                     fn, handle_value(h));
}

void limit_handles() {
  const char* v = std::getenv("RANGECOMM_HANDLE_LIMIT");
  if (v == nullptr || *v == '\0') return;
  char* end = nullptr;
  unsigned long n = std::strtoul(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 0xffffffffUL) return;
  comm_table().limit(static_cast<std::uint32_t>(n));
  request_table().limit(static_cast<std::uint32_t>(n));
  message_table().limit(static_cast<std::uint32_t>(n));
}

bool comm_handles_low() {
  std::size_t reserve = comm_table().limit() / 16;
  return comm_table().room() < (reserve > 0 ? reserve : 1);
}

namespace {

template <class Entry>
int exhausted(MPI_Comm comm, const FakeHandleTable<Entry>& table, const char* what,
              int error_class) {
  return raise_error(comm, error_class,
                     "no free %s handle left in the shim: all %u are live at this process", what,
                     table.limit());
}

// A new entry and its handle, or null when the table is full.
inline FakeComm* new_entry(MPI_Errhandler errhandler, MPI_Comm* out) {
  std::uint32_t idx = comm_table().allocate();
  if (idx == 0) return nullptr;
  FakeComm* c = comm_table().find(idx);
  c->errhandler = errhandler;
  hold_errhandler(errhandler);
  *out = rc_fake_comm_handle(idx);
  return c;
}

// The range of the communicator freed last, when a creation can build in it (core reuses the
// memory of a range that only its handle holds and that never carried traffic): a program that
// makes and frees communicators in a loop then neither frees nor allocates one. Under the
// library's lock, as every caller of release_comm and spare_range.
rangecomm::Comm g_spare;

}  // namespace

int new_pending_comm(MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent) {
  if (new_entry(errhandler, out) == nullptr)
    return exhausted(parent, comm_table(), "communicator", MPI_ERR_INTERN);
  return MPI_SUCCESS;
}

rangecomm::Comm spare_range() { return std::move(g_spare); }
void drop_spare_range() { g_spare = rangecomm::Comm(); }

int new_comm(rangecomm::Comm&& range, MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent) {
  FakeComm* c = new_entry(errhandler, out);
  if (c == nullptr) return exhausted(parent, comm_table(), "communicator", MPI_ERR_INTERN);
  c->range = std::move(range);
  return MPI_SUCCESS;
}

void release_comm(MPI_Comm h) {
  FakeComm* c = find_comm(h);
  if (c == nullptr) return;
  if (c->real != MPI_COMM_NULL) drop_fallback(*c);
  if (c->info != MPI_INFO_NULL) set_hints(*c, MPI_INFO_NULL);
  release_errhandler(c->errhandler);
  if (g_spare.is_null() && rangecomm::Comm_renewable(c->range)) g_spare = std::move(c->range);
  comm_table().release(rc_fake_comm_index(h));
}

int new_request(MPI_Comm comm, MPI_Request* out, FakeRequest** entry) {
  sweep_detached();
  std::uint32_t idx = request_table().allocate();
  if (idx == 0) return exhausted(comm, request_table(), "request", MPI_ERR_INTERN);
  *entry = request_table().find(idx);
  (*entry)->comm = comm;
  *out = rc_fake_request_handle(idx);
  return MPI_SUCCESS;
}

int new_done_request(MPI_Comm comm, MPI_Request* out) {
  FakeRequest* r = nullptr;
  int rc = new_request(comm, out, &r);
  if (rc != MPI_SUCCESS) return rc;
  r->done = true;
  set_empty_status(&r->status);
  return MPI_SUCCESS;
}

int new_message(MPI_Comm comm, rangecomm::Message m, MPI_Message* out) {
  std::uint32_t idx = message_table().allocate();
  if (idx == 0) return exhausted(comm, message_table(), "message", MPI_ERR_INTERN);
  FakeMessage* e = message_table().find(idx);
  e->inner = std::move(m);
  e->comm = comm;
  *out = rc_fake_message_handle(idx);
  return MPI_SUCCESS;
}

}  // namespace rcshim
