// The simulated build's replacements for what SMPI lacks (smpi_compat.h says what and why).
// SMPI runs every simulated process in one OS process, one at a time, and gives each its own
// copy of the program's globals; the private communicator below is therefore per process.
#define RANGECOMM_SIM_COMPAT_IMPLEMENTATION
#include "smpi_compat.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

namespace {

// A message a matched probe took out of SMPI's queue: its bytes and its envelope.
struct TakenMessage {
  std::vector<unsigned char> bytes;
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
};

// Where a taken message is sent to this process again, to be received with the caller's type.
MPI_Comm self_channel() {
  static MPI_Comm comm = MPI_COMM_NULL;
  if (comm == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_SELF, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  return comm;
}

// Holders of a type beyond its first: each MPI_Type_dup adds one, each MPI_Type_free of a held
// type removes one; MPI frees the type at the free that finds none left.
std::unordered_map<MPI_Datatype, int>& extra_holders() {
  static auto* holders = new std::unordered_map<MPI_Datatype, int>;
  return *holders;
}

// This simulated process's own settings of environment variables (nullopt: unset), over the
// environment every process shares.
std::map<std::string, std::optional<std::string>>& own_environment() {
  static auto* settings = new std::map<std::string, std::optional<std::string>>;
  return *settings;
}

// A variable's name as setenv and unsetenv accept it; else errno is EINVAL.
bool valid_name(const char* name) {
  if (name != nullptr && *name != '\0' && std::strchr(name, '=') == nullptr) return true;
  errno = EINVAL;
  return false;
}

// An empty status from `source`: MPI_ANY_SOURCE (a null request) or MPI_PROC_NULL.
void set_empty_status(MPI_Status* status, int source) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = source;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
}

// One test's simulated cost: RANGECOMM_SIM_TEST_COST seconds (0 when unset: SMPI's own charge,
// smpi/test per request tested, stays the only one). Read once; the environment is the run's.
void charge_test() {
  static const double cost = [] {
    const char* text = getenv("RANGECOMM_SIM_TEST_COST");
    return text != nullptr ? std::strtod(text, nullptr) : 0.0;
  }();
  if (cost > 0) simgrid::s4u::this_actor::sleep_for(cost);
}

// Waiting. A wait loop of the library (core's Backoff, the sort's drive loop) calls
// rc_smpi_idle() after each round of polls; when that round found nothing, the process blocks
// in one MPI_Waitany until something it can be waiting for has happened:
// - a request of its own completes. MPI_Waitany would complete and free a request the caller
//   still holds, so point-to-point requests are made persistent here (MPI_Isend, MPI_Issend and
//   MPI_Irecv become *_init + MPI_Start, the compatibility layer's matched receives the same):
//   the wait leaves one inactive, not freed, and the caller's next test or wait of it reports
//   what the wait found and frees it, as it would have for the request MPI made;
// - another process posts a message to it, which a probe would find. Every send here counts
//   itself in its destination's Signal (shared: the simulated processes are one OS process),
//   and if the destination is blocked, posts it a message of no bytes (a bell) on a
//   communicator of the bells, whose receive is in the wait. A bell arrives one latency after
//   its message was posted, when the message, sent eagerly (the scaling runs set
//   smpi/async-small-thresh), has arrived as well (a message too large to go eagerly is found
//   one latency later than by polling). Only a blocked process gets bells, so that they do not
//   pile up in SMPI's queues, which every match searches from the front.
// A round that found something, started or completed an operation, or during which a message
// was posted to the process, does not block. Nor does one that tested a request this layer
// cannot wait on (SMPI's nonblocking collectives, whose completion MPI_Waitany mishandles): the
// loop polls on, as without this layer. Blocking takes no simulated time: a wait ends when its
// event happens instead of at the next poll after it.
struct Signal {
  long posted = 0;       // messages posted to this process
  bool blocked = false;  // in the idle wait, with no bell on its way
};

struct Waiting {
  bool on = false;                 // after MPI_Init, unless RANGECOMM_SIM_WAIT=poll
  bool active = true;              // something happened since the last idle call
  bool opaque = false;             // a request the idle wait cannot see was tested incomplete
  Signal signal;                   // this process's, which the others update
  long seen = 0;                   // signal.posted at the last idle call
  MPI_Comm bells = MPI_COMM_NULL;  // a duplicate of the world: bells only
  MPI_Group world = MPI_GROUP_NULL;
  std::vector<Signal*> peers;           // by world rank
  MPI_Request bell = MPI_REQUEST_NULL;  // persistent receive of any bell
  bool bell_started = false;
  std::unordered_set<MPI_Request> converted;          // persistent, standing for MPI's own
  std::unordered_map<MPI_Request, MPI_Status> found;  // converted, completed by the idle wait
  std::vector<MPI_Request> released;  // converted, freed by their holder while active
};

Waiting& waiting() {
  static auto* state = new Waiting;
  return *state;
}

// Tells `dest` of `comm` (a rank of its group; nothing for MPI_PROC_NULL) that a message was
// posted to it, with a bell if it is blocked.
void ring(MPI_Comm comm, int dest) {
  Waiting& w = waiting();
  w.active = true;
  if (!w.on || dest < 0) return;
  MPI_Group group;
  int world_rank = MPI_UNDEFINED;
  if (MPI_Comm_group(comm, &group) != MPI_SUCCESS) return;
  MPI_Group_translate_ranks(group, 1, &dest, w.world, &world_rank);
  MPI_Group_free(&group);
  if (world_rank == MPI_UNDEFINED) return;
  Signal* peer = w.peers[static_cast<std::size_t>(world_rank)];
  ++peer->posted;
  if (!peer->blocked) return;
  peer->blocked = false;
  MPI_Request bell;
  if (MPI_Isend(nullptr, 0, MPI_BYTE, world_rank, 0, w.bells, &bell) == MPI_SUCCESS)
    MPI_Request_free(&bell);
}

// Starts a persistent request made for a nonblocking call and records it as standing for it.
int start_converted(int rc, MPI_Request* request) {
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Start(request);
  if (rc == MPI_SUCCESS) waiting().converted.insert(*request);
  waiting().active = true;
  return rc;
}

// The end of a converted request its holder found complete (inactive now): freed, as MPI frees
// a completed nonblocking request, and the holder's handle nulled.
void retire(MPI_Request* request) {
  waiting().converted.erase(*request);
  MPI_Request_free(request);
}

// MPI_Test of one request, for every test here: what the idle wait found is reported first.
int test_one(MPI_Request* request, int* flag, MPI_Status* status) {
  Waiting& w = waiting();
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    set_empty_status(status, MPI_ANY_SOURCE);
    return MPI_SUCCESS;
  }
  if (auto it = w.found.find(*request); it != w.found.end()) {
    if (status != MPI_STATUS_IGNORE) *status = it->second;
    const int rc = it->second.MPI_ERROR == MPI_ERR_TRUNCATE ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    w.found.erase(it);
    retire(request);
    *flag = 1;
    w.active = true;
    return rc;
  }
  const bool converted = w.converted.count(*request) != 0;
  int rc = MPI_Test(request, flag, status);
  if (*flag) {
    w.active = true;
    if (converted && *request != MPI_REQUEST_NULL) retire(request);
  } else if (!converted) {
    w.opaque = true;
  }
  return rc;
}

// MPI_Wait of one request.
int wait_one(MPI_Request* request, MPI_Status* status) {
  Waiting& w = waiting();
  int flag = 0;
  if (*request == MPI_REQUEST_NULL || w.found.count(*request) != 0)
    return test_one(request, &flag, status);
  const bool converted = w.converted.count(*request) != 0;
  int rc = MPI_Wait(request, status);
  w.active = true;
  if (converted && *request != MPI_REQUEST_NULL) retire(request);
  return rc;
}

}  // namespace

extern "C" {

int rc_smpi_Init(int* argc, char*** argv) {
  int provided;
  return rc_smpi_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int rc_smpi_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = MPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  const char* mode = getenv("RANGECOMM_SIM_WAIT");
  if (mode != nullptr && std::strcmp(mode, "poll") == 0) return rc;
  Waiting& w = waiting();
  MPI_Comm_dup(MPI_COMM_WORLD, &w.bells);
  MPI_Comm_group(MPI_COMM_WORLD, &w.world);
  MPI_Recv_init(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, 0, w.bells, &w.bell);
  // Each process's Signal is its actor's data; the processes learn each other's actors in an
  // all-gather of their ids (before any message of the program).
  simgrid::s4u::Actor::self()->set_data(&w.signal);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long self = simgrid::s4u::this_actor::get_pid();
  std::vector<long> pids(static_cast<std::size_t>(size));
  MPI_Allgather(&self, 1, MPI_LONG, pids.data(), 1, MPI_LONG, w.bells);
  for (long pid : pids) w.peers.push_back(simgrid::s4u::Actor::by_pid(pid)->get_data<Signal>());
  w.on = true;
  return rc;
}

int rc_smpi_Finalize(void) {
  Waiting& w = waiting();
  if (w.on) {
    w.on = false;
    if (w.bell_started) {
      MPI_Cancel(&w.bell);
      MPI_Wait(&w.bell, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&w.bell);
    for (MPI_Request& r : w.released) {  // those complete; an unmatched receive stays
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (done) MPI_Request_free(&r);
    }
    w.released.clear();
    MPI_Group_free(&w.world);
    MPI_Comm_free(&w.bells);
  }
  return MPI_Finalize();
}

void rc_smpi_idle(void) {
  Waiting& w = waiting();
  if (!w.on || w.active || w.opaque || w.signal.posted != w.seen) {
    w.active = false;
    w.opaque = false;
    w.seen = w.signal.posted;
    return;
  }
  w.signal.blocked = true;
  if (!w.bell_started) {
    MPI_Start(&w.bell);
    w.bell_started = true;
  }
  std::vector<MPI_Request> wait{w.bell};
  for (MPI_Request r : w.converted)
    if (w.found.count(r) == 0) wait.push_back(r);
  const std::size_t first_released = wait.size();
  wait.insert(wait.end(), w.released.begin(), w.released.end());
  int index = MPI_UNDEFINED;
  MPI_Status status;
  MPI_Waitany(static_cast<int>(wait.size()), wait.data(), &index, &status);
  w.signal.blocked = false;
  if (index == 0) {
    w.bell_started = false;  // inactive again
  } else if (index != MPI_UNDEFINED && static_cast<std::size_t>(index) < first_released) {
    w.found.emplace(wait[index], status);
  } else if (index != MPI_UNDEFINED) {
    auto it = std::find(w.released.begin(), w.released.end(), wait[index]);
    MPI_Request_free(&*it);
    w.released.erase(it);
  }
}

int rc_smpi_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  ring(comm, dest);  // first: a large message's send returns only once it is received
  return MPI_Send(buf, count, type, dest, tag, comm);
}

int rc_smpi_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  ring(comm, dest);
  return MPI_Ssend(buf, count, type, dest, tag, comm);
}

int rc_smpi_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  if (!waiting().on) return MPI_Isend(buf, count, type, dest, tag, comm, request);
  int rc = start_converted(MPI_Send_init(buf, count, type, dest, tag, comm, request), request);
  ring(comm, dest);
  return rc;
}

int rc_smpi_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  if (!waiting().on) return MPI_Issend(buf, count, type, dest, tag, comm, request);
  int rc = start_converted(MPI_Ssend_init(buf, count, type, dest, tag, comm, request), request);
  ring(comm, dest);
  return rc;
}

int rc_smpi_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  if (!waiting().on) return MPI_Irecv(buf, count, type, source, tag, comm, request);
  return start_converted(MPI_Recv_init(buf, count, type, source, tag, comm, request), request);
}

int rc_smpi_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status) {
  ring(comm, dest);
  return MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                      source, recvtag, comm, status);
}

int rc_smpi_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Status* status) {
  waiting().active = true;
  return MPI_Recv(buf, count, type, source, tag, comm, status);
}

int rc_smpi_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  int rc = MPI_Iprobe(source, tag, comm, flag, status);
  if (rc == MPI_SUCCESS && *flag) waiting().active = true;
  return rc;
}

int rc_smpi_Wait(MPI_Request* request, MPI_Status* status) {
  if (request == nullptr) return MPI_ERR_ARG;
  return wait_one(request, status);
}

int rc_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && requests == nullptr)) return MPI_ERR_ARG;
  int rc = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    int one =
        wait_one(&requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
    if (one != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS;
  }
  return rc;
}

int rc_smpi_Request_free(MPI_Request* request) {
  if (request == nullptr) return MPI_ERR_ARG;
  Waiting& w = waiting();
  if (*request != MPI_REQUEST_NULL && w.converted.count(*request) != 0) {
    w.converted.erase(*request);
    if (w.found.erase(*request) != 0) return MPI_Request_free(request);  // inactive
    w.released.push_back(*request);  // freed at its completion (an inactive one cannot be)
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  }
  return MPI_Request_free(request);
}

int rc_smpi_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Waiting& w = waiting();
  if (auto it = w.found.find(request); it != w.found.end()) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) *status = it->second;
    return MPI_SUCCESS;
  }
  return MPI_Request_get_status(request, flag, status);
}

int rc_smpi_Cancel(MPI_Request* request) {
  if (request == nullptr) return MPI_ERR_ARG;
  if (waiting().found.count(*request) != 0) return MPI_SUCCESS;  // complete: nothing to cancel
  return MPI_Cancel(request);
}

int rc_smpi_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                    MPI_Status* status) {
  MPI_Status probed;
  int rc = MPI_Iprobe(source, tag, comm, flag, &probed);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  waiting().active = true;
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    set_empty_status(status, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  int bytes = 0;
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  auto* taken = new TakenMessage;
  taken->bytes.resize(static_cast<size_t>(bytes));
  taken->source = probed.MPI_SOURCE;
  taken->tag = probed.MPI_TAG;
  // The earliest message from that source with that tag is the probed one (MPI's order), and
  // nothing else in this process runs in between.
  MPI_Status received;
  rc = MPI_Recv(taken->bytes.data(), bytes, MPI_BYTE, taken->source, taken->tag, comm, &received);
  if (rc != MPI_SUCCESS) {
    delete taken;
    *flag = 0;
    return rc;
  }
  // What arrived, which SMPI's probe can overstate: for a message of a derived type it counts
  // the type's extent, gaps included, rather than the data.
  MPI_Get_count(&received, MPI_BYTE, &bytes);
  taken->bytes.resize(static_cast<size_t>(bytes));
  *message = taken;
  if (status != MPI_STATUS_IGNORE) {
    *status = probed;
    MPI_Status_set_elements(status, MPI_BYTE, bytes);
  }
  return MPI_SUCCESS;
}

int rc_smpi_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  int flag = 0;
  for (;;) {
    int rc = rc_smpi_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    // Blocks this simulated process until a message arrives (MPI_Probe is implemented).
    MPI_Status ignored;
    rc = MPI_Probe(source, tag, comm, &ignored);
    if (rc != MPI_SUCCESS) return rc;
  }
}

int rc_smpi_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                   MPI_Request* request) {
  if (message == nullptr || request == nullptr) return MPI_ERR_ARG;
  if (*message == MPI_MESSAGE_NO_PROC)  // the same value as MPI_MESSAGE_NULL in SMPI
    return MPI_Irecv(buf, count, type, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
  auto* taken = static_cast<TakenMessage*>(*message);
  *message = MPI_MESSAGE_NULL;
  MPI_Comm self = self_channel();
  int rc = waiting().on
               ? start_converted(MPI_Recv_init(buf, count, type, 0, 0, self, request), request)
               : MPI_Irecv(buf, count, type, 0, 0, self, request);
  if (rc == MPI_SUCCESS)
    rc = MPI_Send(taken->bytes.data(), static_cast<int>(taken->bytes.size()), MPI_BYTE, 0, 0, self);
  delete taken;
  return rc;
}

int rc_smpi_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                  MPI_Status* status) {
  if (message == nullptr) return MPI_ERR_ARG;
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    set_empty_status(status, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  auto* taken = static_cast<TakenMessage*>(*message);
  const int source = taken->source;
  const int tag = taken->tag;
  MPI_Request request;
  int rc = rc_smpi_Imrecv(buf, count, type, message, &request);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status st;
  rc = wait_one(&request, &st);
  if (status != MPI_STATUS_IGNORE) {
    *status = st;
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
  }
  return rc;
}

int rc_smpi_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (request == nullptr || flag == nullptr) return MPI_ERR_ARG;
  charge_test();
  return test_one(request, flag, status);
}

// The tests of several requests test each as MPI_Test does (as SMPI's own do: one found complete
// is completed even when MPI_Testall then reports false), one charge for the call.
int rc_smpi_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (count < 0 || flag == nullptr || (count > 0 && requests == nullptr)) return MPI_ERR_ARG;
  charge_test();
  int rc = MPI_SUCCESS;
  *flag = 1;
  for (int i = 0; i < count; ++i) {
    int done = 0;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (test_one(&requests[i], &done, st) != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS;
    if (!done) *flag = 0;
  }
  return rc;
}

int rc_smpi_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (count < 0 || index == nullptr || flag == nullptr || (count > 0 && requests == nullptr))
    return MPI_ERR_ARG;
  charge_test();
  *index = MPI_UNDEFINED;
  *flag = 1;  // when every request is null
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int rc = test_one(&requests[i], flag, status);
    if (*flag) {
      *index = i;
      return rc;
    }
  }
  if (*flag) set_empty_status(status, MPI_ANY_SOURCE);
  return MPI_SUCCESS;
}

int rc_smpi_Testsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]) {
  if (count < 0 || outcount == nullptr ||
      (count > 0 && (requests == nullptr || indices == nullptr)))
    return MPI_ERR_ARG;
  charge_test();
  int rc = MPI_SUCCESS;
  bool any_active = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    any_active = true;
    int done = 0;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[*outcount];
    if (test_one(&requests[i], &done, st) != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS;
    if (done) indices[(*outcount)++] = i;
  }
  if (!any_active) *outcount = MPI_UNDEFINED;
  return rc;
}

// SMPI's MPI_Abort ends every simulated process and then smpirun with exit status 0, as if the
// run had passed; leaving the process instead ends the run with a failure (the others, left
// waiting for it, are reported deadlocked and smpirun exits nonzero).
int rc_smpi_Abort(MPI_Comm, int code) {
  std::fflush(nullptr);
  std::exit(code != 0 ? code : 1);
}

rc_smpi_creation_hook rc_smpi_on_creation = nullptr;

int rc_smpi_Comm_create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm* out) {
  if (rc_smpi_on_creation != nullptr) rc_smpi_on_creation(parent, group, 0, 0);
  return MPI_Comm_create_group(parent, group, tag, out);
}

int rc_smpi_Comm_split(MPI_Comm parent, int color, int key, MPI_Comm* out) {
  if (rc_smpi_on_creation != nullptr) rc_smpi_on_creation(parent, MPI_GROUP_NULL, color, key);
  return MPI_Comm_split(parent, color, key, out);
}

int rc_smpi_Add_error_string(int code, const char* text) {
  return MPI_Add_error_string(code, const_cast<char*>(text));  // SMPI copies it
}

int rc_smpi_Comm_call_errhandler(MPI_Comm comm, int code) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  int rc = MPI_Comm_get_errhandler(comm, &handler);
  if (rc != MPI_SUCCESS) return rc;
  const bool returns = handler == MPI_ERRORS_RETURN;
  if (handler != MPI_ERRORS_RETURN && handler != MPI_ERRORS_ARE_FATAL)
    MPI_Errhandler_free(&handler);  // the reference MPI_Comm_get_errhandler gave
  return returns ? MPI_SUCCESS : MPI_Comm_call_errhandler(comm, code);
}

int rc_smpi_Type_dup(MPI_Datatype type, MPI_Datatype* copy) {
  if (type == MPI_DATATYPE_NULL || copy == nullptr) return MPI_ERR_TYPE;
  ++extra_holders()[type];
  *copy = type;
  return MPI_SUCCESS;
}

int rc_smpi_Type_free(MPI_Datatype* type) {
  if (type == nullptr) return MPI_ERR_ARG;
  auto& holders = extra_holders();
  auto it = holders.find(*type);
  if (it == holders.end()) return MPI_Type_free(type);
  if (--it->second == 0) holders.erase(it);
  *type = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

char* rc_smpi_getenv(const char* name) {
  auto& settings = own_environment();
  auto it = settings.find(name);
  if (it == settings.end()) return getenv(name);
  return it->second ? it->second->data() : nullptr;
}

int rc_smpi_setenv(const char* name, const char* value, int overwrite) {
  if (!valid_name(name)) return -1;
  if (overwrite || rc_smpi_getenv(name) == nullptr) own_environment()[name] = std::string(value);
  return 0;
}

int rc_smpi_unsetenv(const char* name) {
  if (!valid_name(name)) return -1;
  own_environment()[name] = std::nullopt;
  return 0;
}

}  // extern "C"
