// Errors on range communicators go through their own error handlers, called with the fake
// handle: MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL (and MPI_ERRORS_ABORT) and user handlers,
// whose functions the shim records when they are created.
#include <time.h>

#include <cstdarg>
#include <cstdio>
#include <unordered_map>

#include "handles/errors.h"
#include "handles/fortran_hooks.h"
#include "handles/handles.h"
#include "rangecomm/embedding.hpp"
#include "world/roots.h"

namespace rcshim {

namespace {

// What the shim knows of an error handler beyond what MPI counts: fake communicators using it,
// references handed out by MPI_Comm_get_errhandler on fake communicators, and frees the
// program made while fake communicators still used it (MPI must not destroy it yet).
struct HandlerRecord {
  MPI_Comm_errhandler_function* fn = nullptr;
  void (*fortran_fn)(MPI_Fint*, MPI_Fint*) = nullptr;  // made in Fortran: called instead
  int uses = 0, gets = 0, deferred_frees = 0;
};

std::unordered_map<MPI_Errhandler, HandlerRecord>& handlers() {
  static std::unordered_map<MPI_Errhandler, HandlerRecord> map;
  return map;
}

[[noreturn]] void die(MPI_Comm comm, const FakeComm* c, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  rangecomm::Error_string(code, text, &len);
  std::fprintf(stderr, "rangecomm: fatal error on range communicator %#llx%s%s%s: %s\n",
               handle_value(comm), c && !c->name.empty() ? " (" : "", c ? c->name.c_str() : "",
               c && !c->name.empty() ? ")" : "", text);
  std::fflush(stderr);
  // MPICH's launcher (hydra) kills the job as soon as it hears of MPI_Abort and drops output
  // still in its pipes (seen 3 times in 20 runs): give it a moment to forward the message.
  struct timespec moment = {0, 100 * 1000 * 1000};
  nanosleep(&moment, nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

// A handler the shim did not see created (made before it was loaded): MPI can call it only on a
// real communicator, so it hears of the error on the fallback channel instead of the fake handle.
void call_unknown(MPI_Errhandler eh, int code) {
  MPI_Comm channel = fallback_channel();
  if (channel == MPI_COMM_NULL) return;
  MPI_Comm_set_errhandler(channel, eh);
  MPI_Comm_call_errhandler(channel, code);
  MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN);
}

}  // namespace

int raise_on(MPI_Comm comm, int code) {
  if (code == MPI_SUCCESS) return code;
  if (comm == MPI_COMM_NULL) comm = MPI_COMM_WORLD;
  if (!rc_is_fake_comm(comm)) {
    MPI_Comm_call_errhandler(comm, code);
    return code;
  }
  FakeComm* c = find_comm(comm);
  if (c == nullptr) {  // freed while its operations ran on: MPI_COMM_WORLD hears of it
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    return code;
  }
  MPI_Errhandler eh = c->errhandler;
  if (eh == MPI_ERRORS_RETURN) return code;
  if (fatal_errhandler(eh)) die(comm, c, code);
  auto it = handlers().find(eh);
  if (it != handlers().end() && it->second.fortran_fn != nullptr) {
    MPI_Fint handle = rc_fortran_of_fake_comm(comm), fortran_code = code;
    it->second.fortran_fn(&handle, &fortran_code);
  } else if (it != handlers().end() && it->second.fn != nullptr) {
    MPI_Comm handle = comm;
    it->second.fn(&handle, &code);
  } else {
    call_unknown(eh, code);
  }
  return code;
}

namespace {
int vraise(MPI_Comm comm, int error_class, const char* fmt, va_list args) {
  char message[MPI_MAX_ERROR_STRING];
  std::vsnprintf(message, sizeof message, fmt, args);
  return raise_on(comm, rangecomm::Make_error(error_class, "%s", message));
}
}  // namespace

int raise_error(MPI_Comm comm, int error_class, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int rc = vraise(comm, error_class, fmt, args);
  va_end(args);
  return rc;
}

void remember_errhandler(MPI_Errhandler eh, MPI_Comm_errhandler_function* fn) {
  handlers()[eh] = HandlerRecord{fn, nullptr, 0, 0, 0};
}

void hold_program_errhandler(MPI_Errhandler eh) { ++handlers()[eh].uses; }

void release_program_errhandler(MPI_Errhandler eh) {
  auto it = handlers().find(eh);
  if (it == handlers().end() || --it->second.uses > 0) return;
  for (; it->second.deferred_frees > 0; --it->second.deferred_frees) {
    MPI_Errhandler copy = eh;
    MPI_Errhandler_free(&copy);
  }
}

}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_error(MPI_Comm comm, int error_class, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int rc = vraise(comm, error_class, fmt, args);
  va_end(args);
  return rc;
}

extern "C" int rc_fake_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_set_errhandler", &c)) return rc;
  if (errhandler == MPI_ERRHANDLER_NULL)
    return raise_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler: MPI_ERRHANDLER_NULL");
  hold_errhandler(errhandler);
  release_errhandler(c->errhandler);
  c->errhandler = errhandler;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_get_errhandler", &c)) return rc;
  *errhandler = c->errhandler;
  ++handlers()[c->errhandler].gets;  // the program frees this reference; MPI never counted it
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_call_errhandler", &c)) return rc;
  raise_on(comm, errorcode);
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return rc_fake_MPI_Comm_set_errhandler(comm, errhandler);
}

extern "C" int rc_fake_MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return rc_fake_MPI_Comm_get_errhandler(comm, errhandler);
}

extern "C" int rc_hand_MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn,
                                                  MPI_Errhandler* errhandler) {
  Locked locked;  // the handler records are the library's state
  int rc = MPI_Comm_create_errhandler(fn, errhandler);
  if (rc == MPI_SUCCESS) remember_errhandler(*errhandler, fn);
  return rc;
}

extern "C" void rc_fortran_errhandler_made(MPI_Errhandler errhandler, void* fn) {
  Locked locked;
  handlers()[errhandler] =
      HandlerRecord{nullptr, reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*)>(fn), 0, 0, 0};
}

// A reference the shim handed out, or a handler fake communicators still use, is not MPI's to
// drop yet.
extern "C" int rc_hand_MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  Locked locked;
  auto it = handlers().find(*errhandler);
  if (it != handlers().end()) {
    HandlerRecord& h = it->second;
    if (h.gets > 0 || h.uses > 0) {
      if (h.gets > 0)
        --h.gets;
      else
        ++h.deferred_frees;
      *errhandler = MPI_ERRHANDLER_NULL;
      return MPI_SUCCESS;
    }
  }
  return MPI_Errhandler_free(errhandler);
}

// MPICH 4.0 returns its class text (and a stray line of its own) for codes made by
// MPI_Add_error_code even after MPI_Add_error_string; core keeps the library's messages.
extern "C" int rc_hand_MPI_Error_string(int errorcode, char* string, int* resultlen) {
  Locked locked;  // core's table of messages
  return rangecomm::Error_string(errorcode, string, resultlen);
}
