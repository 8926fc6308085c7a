// Start and end: MPI_COMM_WORLD becomes the root of every range inside MPI_Init (a collective
// moment; roots.h), and what the shim holds is released at MPI_Finalize.
#include <cstdlib>
#include <utility>

#include "accelerate/report.h"
#include "base/modes.h"
#include "comms/hints.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "rangecomm/embedding.hpp"
#include "requests/progress_thread.h"
#include "requests/requests.h"
#include "world/roots.h"

namespace rcshim {
namespace {

// MPI_Finalize deletes MPI_COMM_SELF's attributes, then (MPICH and Open MPI) MPI_COMM_WORLD's,
// each newest first. The shim lets go of what it holds in two steps, each an attribute set at
// MPI_Init and so run after every callback the program set later:
//  - on MPI_COMM_SELF: the report, detached requests, the requests and messages the program
//    left (Open MPI 5 refuses MPI_Request_free once SELF's attributes are gone);
//  - on MPI_COMM_WORLD: the communicators, which the program's callbacks on MPI_COMM_WORLD may
//    still use and free (PETSc frees its inner communicators there), then core closes its
//    channels (core/src/comm/attach.cpp).
int shut_down_requests(MPI_Comm, int, void*, void*) {
  stop_progress_thread();  // before the lock, which the thread may be waiting for
  Locked locked;  // MPI calls this from inside MPI_Finalize, where the library may be advanced
  if (g_report) print_report();
  finish_detached();
  request_table().for_each([](std::uint32_t, FakeRequest& r) { r.inner = rangecomm::Request(); });
  message_table().for_each([](std::uint32_t, FakeMessage& m) { m.inner = rangecomm::Message(); });
  return MPI_SUCCESS;
}

int shut_down(MPI_Comm, int, void*, void*) {
  Locked locked;
  std::vector<MPI_Comm> live;
  comm_table().for_each(
      [&](std::uint32_t i, FakeComm&) { live.push_back(rc_fake_comm_handle(i)); });
  for (MPI_Comm c : live) release_comm(c);
  drop_spare_range();
  free_hint_snapshots();
  detach_roots();
  remove_progress_hook();
  return MPI_SUCCESS;
}

// Open MPI (4.1 and 5.0) takes its nonblocking collectives' progress function out of MPI's
// progress loop when the last communicator that ran one is freed; a thread that starts one on
// another communicator at that moment finds the function still there and does not put it back,
// and its operation never completes (tests/conformance/native_defects.c, nbc-progress: 9 of 20
// runs hung on 4.1.4, 12 of 12 on 5.0.7; none with this). One such operation on MPI_COMM_SELF,
// which lives until MPI_Finalize, keeps that count above zero. Local: MPI_COMM_SELF has one
// process.
void keep_nonblocking_progress() {
#if defined(OPEN_MPI)
  int out = 0, in = 0;
  MPI_Request rq = MPI_REQUEST_NULL;
  if (MPI_Ialltoall(&out, 1, MPI_INT, &in, 1, MPI_INT, MPI_COMM_SELF, &rq) == MPI_SUCCESS)
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
#endif
}

// The thread level the program asked for, where the library asked MPI for more (or -1): what
// MPI_Init_thread and MPI_Query_thread tell the program.
int g_program_level = -1;

// Collective over MPI_COMM_WORLD; called right after the real MPI_Init.
int attach_world() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  int program = g_program_level >= 0 ? g_program_level : provided;
  // The progress thread needs MPI at MPI_THREAD_MULTIPLE, which level_to_ask asked for.
  const bool progress_thread = progress_thread_wanted() && provided == MPI_THREAD_MULTIPLE;
  // Threads may call the library at once (library_lock.h): the program's, or the library's own.
  // Only the program's need core to wait by polling and to let other threads in between polls:
  // the progress thread keeps away while a thread of the program is inside the library, so
  // below MPI_THREAD_MULTIPLE core blocks inside MPI as without the thread, under the lock.
  if (program == MPI_THREAD_MULTIPLE || progress_thread) {
    g_threaded = true;
    if (program == MPI_THREAD_MULTIPLE) rangecomm::Set_threaded(pause_library);
    keep_nonblocking_progress();
  }
  rangecomm::Set_error_handler_calls(false);  // range errors go to the fake comm's handler
  int rc = attach_roots(provided == MPI_THREAD_MULTIPLE);
  if (rc != MPI_SUCCESS) return raise_on(MPI_COMM_WORLD, rc);
  read_mode();
  read_report();
  limit_handles();
  for (auto [comm, step] :
       {std::pair{MPI_COMM_SELF, shut_down_requests}, std::pair{MPI_COMM_WORLD, shut_down}}) {
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, step, &keyval, nullptr);
    MPI_Comm_set_attr(comm, keyval, nullptr);
    MPI_Comm_free_keyval(&keyval);
  }
  if (g_accelerate) probe_hints();
  if (progress_thread) start_progress_thread();
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rcshim

namespace {

// The level to ask of MPI for a program that asks for `required`. Under the acceleration modes
// the program's own communicators are the library's, and a blocking call on real handles must
// advance them (progress_rule.h): where MPI has no progress callback for that (MPICH), a helper
// thread does it, which needs MPI_THREAD_MULTIPLE, so the library asks for it then. MPICH's
// single-threaded calls cost the same at that level (docs/shim-design.md has the figures).
// RANGECOMM_SHIM_THREAD_MULTIPLE=1 asks for it in every mode, and so does the library's progress
// thread (RANGECOMM_PROGRESS=thread: requests/progress_thread.h). The program is told the level
// it would have had (MPICH provides every level it is asked for).
int level_to_ask(int required) {
  const char* v = std::getenv("RANGECOMM_SHIM_THREAD_MULTIPLE");
  rcshim::read_mode();
  bool raise = (v != nullptr && v[0] == '1') || rcshim::progress_thread_wanted() ||
               (rcshim::g_accelerate && !rcshim::progress_hook_available());
  return raise ? MPI_THREAD_MULTIPLE : required;
}

int told(int required, int provided) { return provided < required ? provided : required; }

}  // namespace

extern "C" int rc_hand_MPI_Init(int* argc, char*** argv) {
  int level = level_to_ask(MPI_THREAD_SINGLE);
  if (level == MPI_THREAD_SINGLE) {
    int rc = MPI_Init(argc, argv);
    return rc == MPI_SUCCESS ? rcshim::attach_world() : rc;
  }
  int provided = MPI_THREAD_SINGLE;
  int rc = MPI_Init_thread(argc, argv, level, &provided);
  if (rc != MPI_SUCCESS) return rc;
  rcshim::g_program_level = MPI_THREAD_SINGLE;
  return rcshim::attach_world();
}

extern "C" int rc_hand_MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int level = level_to_ask(required);
  int rc = MPI_Init_thread(argc, argv, level, provided);
  if (rc != MPI_SUCCESS) return rc;
  if (level != required) {
    *provided = told(required, *provided);
    rcshim::g_program_level = *provided;
  }
  return rcshim::attach_world();
}

extern "C" int rc_hand_MPI_Query_thread(int* provided) {
  if (rcshim::g_program_level < 0) return MPI_Query_thread(provided);
  *provided = rcshim::g_program_level;
  return MPI_SUCCESS;
}
