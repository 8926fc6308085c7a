// The objects behind fake handles: range communicators, requests and matched messages, and the
// helpers every hand-written hook uses to find them and to report errors.
//
// Sources of the semantics half are compiled with core_redirect.h forced in: a plain MPI_X call
// here reaches the real library. Behaviour on fake handles is reached through rc_ hooks
// (shim_hooks.h, generated, declares every one of them).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "fake_handles.h"
#include "handle_table.h"
#include "library_lock.h"
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

struct Attribute {
  int keyval;
  void* value;
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
int new_comm(rangecomm::Comm range, MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent);
// Entry and handle for an MPI_Comm_idup whose range comes later (range stays null).
int new_pending_comm(MPI_Errhandler errhandler, MPI_Comm* out, MPI_Comm parent);
// Releases everything a fake communicator holds (attributes are deleted by the caller first).
void release_comm(MPI_Comm h);

// A new fake request for comm; *out is its handle and *entry its object.
int new_request(MPI_Comm comm, MPI_Request* out, FakeRequest** entry);
// A request that is complete at birth with an empty status (MPIX_Icomm_create_group).
int new_done_request(MPI_Comm comm, MPI_Request* out);
int new_message(MPI_Comm comm, rangecomm::Message m, MPI_Message* out);

// --- Errors (error_dispatch.cpp) ---

// Calls the error handler of comm (fake or real; MPI_COMM_NULL: MPI_COMM_WORLD's) with code
// and returns code. A fake comm's handler gets the fake handle.
int raise_on(MPI_Comm comm, int code);
// A new code of error_class with a formatted message, raised on comm.
int raise_error(MPI_Comm comm, int error_class, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Result of a core call made for fake comm: MPI_SUCCESS, or the code raised on comm.
inline int result(MPI_Comm comm, int rc) { return rc == MPI_SUCCESS ? rc : raise_on(comm, rc); }

// User error handler functions, recorded when the handler is created through the shim.
void remember_errhandler(MPI_Errhandler eh, MPI_Comm_errhandler_function* fn);
void hold_errhandler(MPI_Errhandler eh);     // a fake comm uses it
void release_errhandler(MPI_Errhandler eh);  // it no longer does

// --- Roots (lifecycle.cpp) ---

// MPI_COMM_WORLD as a range communicator: every range of the shim lives on its channel.
// Null until MPI_Init/MPI_Init_thread went through the shim.
const rangecomm::Comm& world_range();
// Private duplicates of MPI_COMM_WORLD: one for the fallback communicators' creation, one for
// MPI_Comm_create_group on groups that are not ranges (user tags).
MPI_Comm fallback_channel();
MPI_Comm group_channel();

// Where the ranges of a communicator live: rank r of it is rank in_range(r) of range. A fake
// communicator is its own range (first 0, stride 1); a real one maps into MPI_COMM_WORLD's
// range: by first + r * stride when its ranks are an increasing arithmetic progression of
// world ranks (dups of MPI_COMM_WORLD, MPI_COMM_SELF, order-keeping splits, ...), through the
// table `world` otherwise (then what it makes are general groups of the world).
struct AffineMap;
struct RangeParent {
  // Borrowed from the parent's handle (a communicator of the library, or the world's range),
  // which outlives the call using it: no reference count to touch on the creation path.
  const rangecomm::Comm* range = nullptr;
  // The parent itself as a library communicator whose identity its members share: a library
  // communicator's own, the world's range, or a real communicator's agreed mirror
  // (agree_mirror). Null for a real communicator without one yet.
  const rangecomm::Comm* self = nullptr;
  AffineMap* map = nullptr;  // a real communicator's cached facts (null: the world, the library's)
  int first = 0, stride = 1, size = 0, rank = MPI_UNDEFINED;
  const std::vector<int>* world = nullptr;  // world rank of each rank, for irregular parents
  int in_range(int r) const { return world ? (*world)[r] : first + r * stride; }
  bool affine() const { return world == nullptr; }
};
int parent_of(MPI_Comm comm, const char* fn, RangeParent* out);
// The range of ranks first..last (step stride) of the parent's communicator, made with
// `levels` (its nesting below the parent's range, part of its identity). Errors are raised on comm
// (the parent's handle).
int split_parent(MPI_Comm comm, const RangeParent& p, int first, int last, int stride, int levels,
                 rangecomm::Comm* out);
// parent_of for a real intracommunicator, raising nothing: false for an intercommunicator (or
// when MPI was not started through the shim). Any intracommunicator maps into the world: an
// irregular one through a table (out->world), computed once and cached on it.
bool mapped_parent(MPI_Comm real, RangeParent* out);
// Gives a real parent without one (p->self null) its mirror: a library communicator of the same
// processes in the same order, whose identity comes from a number its members agree on in one
// MPI_Iallreduce on `real` - so only inside a call collective over `real`. Cached on `real`
// until MPI frees it; later creations from `real` derive theirs from the mirror's, locally.
// *low (when given): whether some member's communicator table is nearly full, learnt in the
// same all-reduction (false when p already had its mirror: no message, nothing learnt).
int agree_mirror(MPI_Comm real, RangeParent* p, bool* low = nullptr);

// --- RANGECOMM_MODE (accelerate.cpp) ---

// Non-zero under RANGECOMM_MODE=accelerate or shadow: communicators made from real ones become
// ranges where they can. g_shadow (RANGECOMM_MODE=shadow): also every other intracommunicator
// MPI makes for the program. Read once, at MPI_Init.
extern int g_accelerate;
extern int g_shadow;
void read_mode();

// Creation calls MPI itself makes while it runs one the shim passed on to it are MPI's own:
// MPICH's MPI_Comm_split_type(MPIX_COMM_TYPE_NEIGHBORHOOD) runs ROMIO, which calls MPI_Comm_dup,
// MPI_Comm_split, MPI_Comm_create (and MPI_File_open's dup) by their public names and takes the
// results as MPICH's own communicators. A thread marks such a call while it runs
// (ForwardedToMpi); the creation hooks read the count only under the acceleration modes, and the
// thread-local flag only while some thread is marked, so the pass-through path reads neither,
// and other threads' creations meanwhile stay the library's.
extern std::atomic<int> g_forwarding;   // threads inside a marked call
extern thread_local bool t_forwarding;  // this thread is
inline bool called_by_mpi() {
  return g_forwarding.load(std::memory_order_relaxed) != 0 && t_forwarding;
}
class ForwardedToMpi {
 public:
  explicit ForwardedToMpi(bool mark) : mark_(mark && !t_forwarding) {
    if (!mark_) return;
    g_forwarding.fetch_add(1, std::memory_order_relaxed);
    t_forwarding = true;
  }
  ~ForwardedToMpi() {
    if (!mark_) return;
    t_forwarding = false;
    g_forwarding.fetch_sub(1, std::memory_order_relaxed);
  }
  ForwardedToMpi(const ForwardedToMpi&) = delete;
  ForwardedToMpi& operator=(const ForwardedToMpi&) = delete;

 private:
  bool mark_;
};

// What each member gives a split's exchange, kSplitEntry ints in rank order: its colour, its
// key, and whether its handle table is nearly full (comm_handles_low).
constexpr int kSplitEntry = 3;
// Whether any member's handle table is nearly full: then every member leaves the split to MPI.
bool any_table_low(const std::vector<int>& entries);
// What MPI_Comm_split makes, from everyone's entries (comm_split.cpp).
struct SplitPlan {
  bool member = false;     // color != MPI_UNDEFINED
  std::vector<int> ranks;  // my group's parent ranks in new rank order (members only)
};
SplitPlan plan_split(const std::vector<int>& entries, int me);
// This process's group of plan made `levels` below parent (null for a non-member).
int make_members(const rangecomm::Comm& parent, const SplitPlan& plan, int levels,
                 rangecomm::Comm* out);

// --- Hints (hints.cpp) ---

// c's hints become `own` (a handle c now owns, or MPI_INFO_NULL); the old ones are let go.
void set_hints(FakeComm& c, MPI_Info own);
// to starts with from's hints, as a dup does (MPI_Comm_dup of a library communicator).
int copy_hints(const FakeComm& from, FakeComm& to);
// The same for a dup (dup true) or idup of the real communicator `real`: the world's hints are
// a snapshot shared until the program sets new ones on the world.
int inherit_hints(MPI_Comm real, FakeComm& to, bool dup);
// Adds the hints MPI gives what MPI_Comm_dup, _dup_with_info and _split_type make beyond its
// defaults (Open MPI 5.0 has two), where c lacks them.
void add_dup_hints(FakeComm& c);
// MPI_Comm_set_info: c's hints overlaid with those of `given` that MPI knows (others are
// ignored, as MPI ignores them).
int apply_hints(FakeComm& c, MPI_Info given);
// A communicator created with `given` (MPI_Comm_dup_with_info, split_type's info): MPI's
// defaults overlaid with given's hints as MPI takes them.
int create_with_hints(FakeComm& c, MPI_Info given);
// Exactly the hints MPI has for the real communicator `real` (one it replaces).
int take_hints(MPI_Comm real, FakeComm& to);
// MPI_Comm_get_info: a new info object with the hints in use (MPI's defaults when none were set).
int hints_in_use(const FakeComm& c, MPI_Info* out);
// Asks MPI how it treats hints (four creations from MPI_COMM_SELF), once; at MPI_Init under the
// acceleration modes, so that no later creation of the program pays for it, else at first need.
void probe_hints();
// At MPI_Finalize, after every library communicator is gone.
void free_hint_snapshots();

// Frees the range's fallback communicator, if it has one (fallback.cpp).
void drop_fallback(FakeComm& c);

// --- Groups and creation (comm_creation.cpp) ---

// The MPI group of a range (a new group the caller frees), derived from base's group.
int range_group(const rangecomm::Comm& range, MPI_Group* out, MPI_Comm base = MPI_COMM_WORLD);
// group as a group derived from channel's own (see comm_management.cpp for why).
int group_on(MPI_Comm channel, MPI_Group group, MPI_Group* out);
// The error handler a communicator made from comm starts with (MPI: comm's).
MPI_Errhandler inherited_errhandler(MPI_Comm comm);
// The ranks in comm of group's members, in group order; an error when not a subset.
int group_in_comm(MPI_Comm comm, MPI_Group group, const char* fn, std::vector<int>* ranks);
// Whether ranks are first, first + stride, ..., last with stride >= 1.
bool as_range(const std::vector<int>& ranks, int* first, int* last, int* stride);
// A range of comm made locally, one level below it; MPI_COMM_NULL for non-members.
int create_range(MPI_Comm comm, int first, int last, int stride, const char* fn, MPI_Comm* newcomm);

// --- Attributes (attributes.cpp) and nonblocking creation (comm_creation.cpp) ---

// Runs the delete callbacks of all of c's attributes (newest first) and removes them.
int delete_all_attributes(MPI_Comm comm, FakeComm& c);
// Copies from's attributes to `to` through their copy callbacks (MPI_Comm_dup).
int copy_attributes(MPI_Comm oldcomm, FakeComm& from, FakeComm& to);
// The same from a real communicator: every keyval the program made through the shim whose
// attribute is set on `real` (MPI_Comm_dup of a real communicator made a range).
int copy_real_attributes(MPI_Comm real, FakeComm& to);
// The nesting level of the library's collective creations (dup, split, create): their
// identities then differ from those of ranges made locally one level down (MPIX_Comm_create_range),
// whose order relative to them the members do not share.
constexpr int kCollectiveLevel = 2;
// Completes a nonblocking creation: start(out, request) starts the library's creation into
// *out; *newcomm (a handle from new_pending_comm) gets it when *request completes. On an error
// (raised on comm) *newcomm is released and set to MPI_COMM_NULL.
int start_creation(MPI_Comm comm, const char* fn, MPI_Comm* newcomm, MPI_Request* request,
                   const std::function<int(rangecomm::Comm*, rangecomm::Request*)>& start);

// --- Requests (requests.cpp) ---

// Advances r; true once its operation is complete (the result is kept in r until reported).
bool poll(FakeRequest& r);
// Blocks until r is complete, advancing everything else meanwhile.
void wait(FakeRequest& r);
// Hands the result of a complete r to the user: status (MPI_ERROR untouched unless
// keep_error_field is false), return code; frees a one-shot request (*h = MPI_REQUEST_NULL),
// makes a persistent one inactive.
int report(MPI_Request* h, FakeRequest& r, MPI_Status* status, bool set_error_field);
// An inactive persistent request: completion calls treat it like MPI_REQUEST_NULL.
inline bool inactive(const FakeRequest& r) { return r.start && !r.active; }
// MPI's empty status.
void set_empty_status(MPI_Status* st);

// --- Partitioned requests (partitioned.cpp) ---

// Whether r (r.partitioned set) is a started partitioned send whose partitions are not all
// ready yet: its message is not sent, so completion calls see it incomplete.
bool partitioned_held(const FakeRequest& r);
// A finished partitioned receive's status, from its hidden channel's ranks to the program's.
void partitioned_status(FakeRequest& r);

// Waits for a real request while advancing range operations (the progress rule).
int wait_real(MPI_Request* request, MPI_Status* status);
// RANGECOMM_SHIM_NO_PROGRESS_RULE=1 turns the rule off, only to show that the test program
// tests/shim/range_progress.c then deadlocks. Read once; never on the pass-through path.
bool progress_rule_disabled();

// Keeps an operation nobody will wait for (MPI_Request_free, MPI_Bsend's copy) with the memory
// it uses until it completes; swept when new requests are made and at MPI_Finalize.
void detach(FakeRequest&& r);
void sweep_detached();
void finish_detached();

// Whether MPI was initialised with MPI_THREAD_MULTIPLE (progress_helper.h).
bool mpi_thread_multiple();

// Busy-polling starves other ranks when there are more ranks than cores: after a burst of
// polls, give the core away between polls.
class Backoff {
 public:
  void pause();

 private:
  int polls_ = 0;
};

}  // namespace rcshim
