// For a layer that puts rangecomm behind another API (the PMPI interposer in shim/): control
// over error handlers, and the few facts about a range it needs to create more of them.
#pragma once

#include <mpi.h>

#include <sched.h>

#include <cstdint>
#include <functional>

#include "rangecomm/comm.hpp"
#include "rangecomm/request.hpp"

namespace rangecomm {

// Whether the library calls MPI error handlers itself (the default: the root communicator's,
// or MPI_COMM_WORLD's). A layer with handlers of its own per range turns this off and calls
// them with the returned codes; codes, classes and messages (Error_string) stay the same.
void Set_error_handler_calls(bool enabled);

// For a layer that lets several threads call the library, one at a time under a lock of its
// own (the shim under MPI_THREAD_MULTIPLE). From then on the library never blocks inside MPI:
// every blocking call polls, and between polls calls pause(), which must let other threads in
// (release the lock, yield, take it again). Call once, before the threads start.
void Set_threaded(void (*pause)());
// For a layer that advances the library while the program is outside it (the shim's progress
// thread calls Progress()): every nonblocking collective then stays an operation that
// Progress() moves. Otherwise one that is a single send or receive for this process (a leaf of a
// tree, the root of one over two processes) is handed over as MPI's own request, which is
// cheaper but moves only inside MPI calls of the program's.
void Set_background_progress(bool on);

namespace detail {
extern void (*g_pause_hook)();  // Set_threaded's pause, or null
}  // namespace detail

// How every wait loop, the library's and the embedding layer's, gives way between two polls.
// After Set_threaded each pause runs its pause, so that a thread waiting here never holds the
// lock another thread needs to send what it waits for. Otherwise busy-polling starves the other
// ranks when there are more ranks than cores: after a burst of polls, the core is given away
// between polls.
class Backoff {
 public:
  explicit Backoff(int burst = 64) : burst_(burst) {}
  void pause() {
    if (detail::g_pause_hook != nullptr) return detail::g_pause_hook();
    if (++polls_ > burst_) sched_yield();
  }

 private:
  int burst_;
  int polls_ = 0;
};

// A new error code of error_class whose Error_string is "rangecomm: " + the formatted message.
// Calls no error handler.
int Make_error(int error_class, const char* format, ...) __attribute__((format(printf, 2, 3)));

// A number in 0..2^31-1 derived from comm's identity (docs/tag-layout.md), for a layer that
// needs a tag to tell concurrent operations of different communicators apart. 0 for the null
// communicator.
std::uint32_t Comm_context(const Comm& comm);
// Whether comm's handle alone holds a communicator that never carried traffic (no copy, no
// pending operation, nothing of it known outside it): a creation into the handle then builds
// in its memory (as it also does, after retiring it as its release would, for one that carried
// traffic). A layer that frees handles of its own and makes new ones (the shim's MPI_Comm_free,
// then a creation) can keep such a communicator for its next creation; one that carried
// traffic it releases at once, so nothing of a freed communicator stays in its channel.
bool Comm_renewable(const Comm& comm);
// Split_Comm, with the new range `levels` (>= 1) nesting levels below the parent instead of
// one. The levels are part of the creation's identity, so a layer whose members order some
// creations alike (those collective over the parent) and others not (local ones) keeps their
// repeat counts apart by giving them different levels. All members must pass the same levels.
int Split_Comm_below(const Comm& parent, int first, int last, int stride, int levels, Comm* out);
// Split_Comm_below for a layer that makes one range for each of many keys of its own (the
// shim's partitioned channels: a tag and a direction): creations with different salts are
// different communicators, each with its own repeat count. Salt 0 is Split_Comm_below.
int Split_Comm_salted(const Comm& parent, int first, int last, int stride, int levels,
                      std::uint64_t salt, Comm* out);
// The communicator of the parent's ranks ranks[0..n-1] (in that rank order, all distinct), made
// locally as Split_Comm_below makes a range: for creations collective over the parent
// (MPI_Comm_split and MPI_Comm_create), which every member makes in the same order.
// Non-members get the null communicator.
int Group_Comm_below(const Comm& parent, const int* ranks, int n, int levels, Comm* out);
// Icomm_create_group for creations whose callers cannot order them per parent (the shim's
// creations from real communicators, which all reach the library as groups of the world): the
// members agree on a number drawn at random, in one all-reduction over the group, and the new
// communicator's identity is derived from it. `serial` plays the tag's part: creations in
// flight at once on the same group need different serials.
int Icomm_create_agreed(const Comm& parent, const int* ranks, int n, int serial, Comm* out,
                        Request* request);
// The communicator of the parent's ranks ranks[0..n-1] whose identity comes from a 128-bit
// number the members agree on in an operation the caller starts: start(mine, agreed, &req)
// begins a reduction with MPI_MAX of four MPI_UINT32_T from mine into agreed (MPI_Iallreduce)
// over a communicator on which every member starts it at the same place in its order of
// collectives (the real parent of MPI_Comm_idup, whose idups may be started in different orders
// on different processes for different parents). Complete when req completes; a start that
// completes the reduction itself (a blocking MPI_Allreduce) leaves req MPI_REQUEST_NULL.
int Icomm_create_numbered(const Comm& parent, const int* ranks, int n,
                          const std::function<int(const std::uint32_t* mine, std::uint32_t* agreed,
                                                  MPI_Request* req)>& start,
                          Comm* out, Request* request);
// A copy of `of` with the same members (MPI_Comm_idup of a library communicator), made without
// a message and complete at once: a collective of `of`, called in the same order as its other
// collectives, whose identity comes from of's next collective sequence number.
int Icomm_dup(const Comm& of, Comm* out, Request* request);
// MPI lets a program free a user-defined MPI_Op while a nonblocking collective still uses it.
// Call this where the program frees one: if a pending collective of the library uses op, the
// library takes over and calls MPI_Op_free when the last of them completes (returns true; the
// caller must not free op itself). Returns false when nothing of the library uses op.
bool Defer_op_free(MPI_Op op);

}  // namespace rangecomm
