// Requests, matched messages and the MPI completion calls over them.
#pragma once

#include <mpi.h>

#include <atomic>

namespace rangecomm {

namespace detail {
class Operation;
struct SelfMessage;
struct RequestAccess;
}  // namespace detail

// The handle of a nonblocking operation, like MPI_Request: a default-constructed Request is
// MPI_REQUEST_NULL, completion (Wait/Test success) resets it to null. Move-only, so there is
// never a stale copy of an active request. Destroying an active request frees it as
// MPI_Request_free does: the operation still completes, nobody is told.
class Request {
 public:
  Request() = default;
  Request(Request&& other) noexcept { take(other); }
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() {
    if (kind_ != Kind::null) release();
  }

  bool is_null() const { return kind_ == Kind::null; }

 private:
  friend struct detail::RequestAccess;
  enum class Kind : unsigned char {
    null,         // MPI_REQUEST_NULL
    done,         // complete at birth (MPI_PROC_NULL): empty status
    native_send,  // an MPI request; status needs no translation
    native_recv,  // an MPI request; status source/tag become source_/tag_
    op,           // an operation of the library's engine
  };
  void take(Request& other) noexcept;
  void release() noexcept;

  Kind kind_ = Kind::null;
  int source_ = MPI_PROC_NULL;
  int tag_ = MPI_ANY_TAG;
  MPI_Request native_ = MPI_REQUEST_NULL;
  detail::Operation* op_ = nullptr;   // holds one reference
  MPI_Comm errcomm_ = MPI_COMM_NULL;  // its error handler hears of failures at completion
};

// A message taken out of matching by Mprobe/Improbe, like MPI_Message. Move-only.
class Message {
 public:
  Message() = default;
  Message(Message&& other) noexcept { take(other); }
  Message& operator=(Message&& other) noexcept;
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message();

  bool is_null() const { return kind_ == Kind::null; }

 private:
  friend struct detail::RequestAccess;
  enum class Kind : unsigned char { null, no_proc, native, self };
  void take(Message& other) noexcept;
  void release() noexcept;

  Kind kind_ = Kind::null;
  int source_ = MPI_PROC_NULL;
  int tag_ = MPI_ANY_TAG;
  MPI_Message native_ = MPI_MESSAGE_NULL;
  detail::SelfMessage* self_ = nullptr;  // owned
  MPI_Comm errcomm_ = MPI_COMM_NULL;
};

// MPI's completion calls, with MPI's semantics: null requests are inactive (Wait returns an
// empty status at once, Waitany/Testany report MPI_UNDEFINED when all are null), completed
// requests become null, Waitall/Testall/Waitsome/Testsome return MPI_ERR_IN_STATUS when an
// operation failed. Every call advances all outstanding operations of the process, not only
// the ones it was given. Status arguments accept MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE.
int Wait(Request* request, MPI_Status* status);
int Test(Request* request, int* flag, MPI_Status* status);
int Waitall(int count, Request requests[], MPI_Status statuses[]);
int Testall(int count, Request requests[], int* flag, MPI_Status statuses[]);
int Waitany(int count, Request requests[], int* index, MPI_Status* status);
int Testany(int count, Request requests[], int* index, int* flag, MPI_Status* status);
int Waitsome(int count, Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int Testsome(int count, Request requests[], int* outcount, int indices[], MPI_Status statuses[]);

// Cancels a receive that has not matched yet (a later Wait reports it with
// MPI_Test_cancelled); cancelling one that has matched has no effect. A send to another process
// is passed to MPI_Cancel; a synchronous send to self is cancelled while nobody has taken it.
int Cancel(Request* request);
// Marks the request for deallocation and sets it to null; the operation still completes.
int Request_free(Request* request);

// Advances every outstanding operation of the library once. Never blocks.
int Progress();

namespace detail {
// Operations that need Progress() to move (engine receives, orphaned requests, running
// collectives), counted where they start and end so that asking costs one load. Writers are
// serialised (one thread, or the shim's library lock); the count is atomic only so that a
// thread reading it without that lock (the shim's pass-through path) reads a whole value.
class ProgressCounter {
 public:
  void operator++() noexcept {
    n_.store(n_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void operator--() noexcept {
    n_.store(n_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
  bool any() const noexcept { return n_.load(std::memory_order_relaxed) != 0; }

 private:
  std::atomic<int> n_{0};
};
extern ProgressCounter g_progress_needed;
}  // namespace detail

// True while some operation of this process moves only when the library is called; a layer that
// blocks in MPI on other work (the PMPI shim) must then call Progress() while it waits.
inline bool Progress_needed() noexcept { return detail::g_progress_needed.any(); }

}  // namespace rangecomm
