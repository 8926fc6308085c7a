// The objects behind fake handles (range communicators, requests, matched messages), their
// tables (tables.cpp) and how hand-written hooks find, make and release them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/fake_handles.h"
#include "base/library_lock.h"
#include "handles/handle_table.h"
#include "rangecomm/rangecomm.hpp"
#include "shim_hooks.h"

namespace rcshim {

// A handle's bits, for messages (MPICH handles are ints, Open MPI's pointers).
template <class H>
unsigned long long handle_value(H h) {
  if constexpr (std::is_pointer_v<H>)
    return reinterpret_cast<std::uintptr_t>(h);
  else
    return static_cast<unsigned int>(h);
}

// Which language set an attribute: C stores a pointer, Fortran an integer (MPI_ATTR_PUT's
// INTEGER or MPI_COMM_SET_ATTR's INTEGER(KIND=MPI_ADDRESS_KIND)), kept in `value`.
enum class AttrLang : unsigned char { c, fortran_int, fortran_aint };

// An integer attribute value set from Fortran as C sees it: MPI gives C a pointer to the integer
// (INTEGER for MPI-1's calls, INTEGER(KIND=MPI_ADDRESS_KIND) else), valid until the attribute
// is deleted or replaced, so it lives apart from the communicator's list of attributes (which
// moves its elements).
struct FortranValue {
  MPI_Aint aint;
  MPI_Fint fint;
  explicit FortranValue(MPI_Aint v) : aint(v), fint(static_cast<MPI_Fint>(v)) {}
  void* at(AttrLang lang) {
    return lang == AttrLang::fortran_int ? static_cast<void*>(&fint) : static_cast<void*>(&aint);
  }
  MPI_Aint get(AttrLang lang) const { return lang == AttrLang::fortran_int ? fint : aint; }
};

struct Attribute {
  int keyval;
  void* value;  // as C set it, or the integer Fortran set
  AttrLang lang = AttrLang::c;
  std::unique_ptr<FortranValue> cell;  // the integer for C to point to, when Fortran set it
};

// A range communicator behind a fake MPI_Comm.
struct FakeComm {
  rangecomm::Comm range;              // null while an MPI_Comm_idup is still running
  std::string name;                   // MPI_Comm_set_name; "" as MPI gives new comms
  std::vector<Attribute> attributes;  // in the order they were first set
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  // Its hints: from MPI_Comm_set_info (a copy), or inherited at creation. When info_shared, a
  // snapshot of the world's hints that many communicators share (hints.cpp): never freed here.
  MPI_Info info = MPI_INFO_NULL;
  bool info_shared = false;
  MPI_Comm real = MPI_COMM_NULL;  // the fallback real communicator, made on first need
  // MPI_Comm_attach_buffer's buffer, given back by MPI_Comm_detach_buffer (buffered sends
  // copy their data elsewhere: mpi41_buffers.cpp).
  void* buffer = nullptr;
  MPI_Count buffer_size = 0;
  bool buffer_attached = false;
};

struct Partitioned;  // a partitioned request's own state (partitioned.cpp)

// A request on a range (or a request this half completes itself).
struct FakeRequest {
  rangecomm::Request inner;       // the operation in core; null when inactive
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler hears of a failure
  bool done = false;              // completed by a peek, not yet reported to the user
  int rc = MPI_SUCCESS;           // result once done
  MPI_Status status{};
  // Persistent requests: starts the operation into `inner`; null for one-shot requests.
  std::function<int(rangecomm::Request*)> start;
  bool active = true;  // persistent: started and not yet completed
  // Runs once when the operation completes successfully (MPI_Comm_idup makes the range here).
  std::function<int()> on_complete;
  std::shared_ptr<void> keep;  // memory that must live until completion
  // MPI_Psend_init/MPI_Precv_init: the partitions and the hidden channel; null otherwise.
  std::shared_ptr<Partitioned> partitioned;
};

struct FakeMessage {
  rangecomm::Message inner;
  MPI_Comm comm = MPI_COMM_NULL;
};

extern FakeHandleTable<FakeComm> g_comm_table;  // tables.cpp
extern FakeHandleTable<FakeRequest> g_request_table;
extern FakeHandleTable<FakeMessage> g_message_table;
inline FakeHandleTable<FakeComm>& comm_table() { return g_comm_table; }
inline FakeHandleTable<FakeRequest>& request_table() { return g_request_table; }
inline FakeHandleTable<FakeMessage>& message_table() { return g_message_table; }

// The entry behind a fake handle; null for a freed or never-issued one.
// (A pointer inside the Open MPI region that is not a handle's exact address is garbage.)
inline FakeComm* find_comm(MPI_Comm h) {
  std::uint32_t i = rc_fake_comm_index(h);
  return rc_is_fake_comm(h) && rc_fake_comm_handle(i) == h ? comm_table().find(i) : nullptr;
}
inline FakeRequest* find_request(MPI_Request h) {
  std::uint32_t i = rc_fake_request_index(h);
  return rc_is_fake_request(h) && rc_fake_request_handle(i) == h ? request_table().find(i)
                                                                 : nullptr;
}
inline FakeMessage* find_message(MPI_Message h) {
  std::uint32_t i = rc_fake_message_index(h);
  return rc_is_fake_message(h) && rc_fake_message_handle(i) == h ? message_table().find(i)
                                                                 : nullptr;
}

// RANGECOMM_HANDLE_LIMIT=N (a testing knob, read once at MPI_Init before any handle exists):
// each table holds at most N live handles, so that running out can be tested.
void limit_handles();
// Whether this process's communicator table is nearly full (less than a sixteenth of it free):
// creations that exchange data anyway tell their members, and all of them then leave the
// creation to MPI (accelerate.cpp). A creation without a message cannot learn its peers'
// state, so it keeps the rest.
bool comm_handles_low();

// Like find_comm, but a dead handle is an MPI_ERR_COMM error through MPI_COMM_WORLD's handler
// (there is no communicator whose handler could hear it); fn names the call in the message.
int get_comm(MPI_Comm h, const char* fn, FakeComm** out);
int get_request(MPI_Request h, const char* fn, FakeRequest** out);

// Registers a new range communicator; *out is its fake handle. It inherits errhandler. When
// the table is full, MPI_ERR_INTERN is raised on parent (the communicator it is made from).
int new_comm(rangecomm::Comm&& range, MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent);
// Entry and handle for an MPI_Comm_idup whose range comes later (range stays null).
int new_pending_comm(MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent);
// Releases everything a fake communicator holds (attributes are deleted by the caller first).
void release_comm(MPI_Comm h);
// A freed communicator's range for a new creation to build in (Split_Comm_below into it), or
// the null communicator. Dropped at MPI_Finalize, before the world's range.
rangecomm::Comm spare_range();
void drop_spare_range();

// A new fake request for comm; *out is its handle and *entry its object.
int new_request(MPI_Comm comm, MPI_Request* out, FakeRequest** entry);
// A request that is complete at birth with an empty status (MPIX_Icomm_create_group).
int new_done_request(MPI_Comm comm, MPI_Request* out);
int new_message(MPI_Comm comm, rangecomm::Message m, MPI_Message* out);

}  // namespace rcshim
