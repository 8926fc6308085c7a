// The simulated build's nonblocking collectives on MPI's own communicators, and the test and wait
// calls, which drive them (smpi_compat.h says why they are replaced).
//
// A collective here is MPICH's schedule of it: rounds of point-to-point messages, each round
// posted once the one before it has completed, with the local reductions between rounds. It
// advances in this process's test, wait and probe calls (the only calls a process waits in
// while one runs, in this build's programs); a process blocked in another blocking call holds
// its collectives back until it returns, as an MPI without a progress thread would outside
// its progress engine. Its messages carry tags counted down from MPI_TAG_UB on the user's
// communicator, a tag per collective started there (4096 before one is reused: two that share
// a tag cannot take each other's messages unless a process runs more than 4096 at once there,
// as messages between two processes with one tag arrive in order): a receive of
// MPI_ANY_TAG on a communicator with a collective running could take one, which nothing in
// this build does (the library talks on communicators of its own). A collective posts its
// later rounds on the communicator's handle, so the communicator must not be freed while one
// runs (MPI allows it; nothing here does it).
//
// Its request is a handle SMPI never sees: a pointer to the collective, told apart from SMPI's
// requests by the list of this process's running collectives. Every call that takes a request
// and that the build's code makes passes through here.
#define RANGECOMM_SIM_COMPAT_IMPLEMENTATION
#include "smpi_compat.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

namespace {

// One test call's simulated cost: RANGECOMM_SIM_TEST_COST seconds (0 when unset, and SMPI's
// own charge, smpi/test per request tested, is the only one). Read once: the run's setting.
void charge_test() {
  static const double cost = [] {
    const char* text = getenv("RANGECOMM_SIM_TEST_COST");
    return text != nullptr ? std::strtod(text, nullptr) : 0.0;
  }();
  if (cost > 0) simgrid::s4u::this_actor::sleep_for(cost);
}

// A nonblocking collective as rounds of messages; `then` runs when a round's messages are done.
class Collective {
 public:
  struct Message {
    bool send;
    void* buf;
    int peer;
  };
  struct Round {
    std::vector<Message> messages;
    std::function<void()> then;
  };

  Collective(MPI_Comm comm, int tag, int count, MPI_Datatype type)
      : comm_(comm), tag_(tag), count_(count), type_(type) {}

  Round& round() { return rounds_.emplace_back(); }
  // A buffer of `count` elements that lives as long as the collective.
  void* scratch() {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type_, &lb, &extent);
    return scratch_.emplace_back(static_cast<size_t>(extent) * count_).data();
  }
  bool done() const { return next_ == rounds_.size() && posted_.empty(); }
  // Done, or stopped by an error: either way its request completes.
  bool finished() const { return done() || error_ != MPI_SUCCESS; }
  int error() const { return error_; }

  // Completes what it can: true once the last round is done.
  bool advance() {
    while (!finished()) {
      if (!posted_.empty()) {
        int flag = 0;
        int rc = MPI_Testall(static_cast<int>(posted_.size()), posted_.data(), &flag,
                             MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) error_ = rc;
        if (!flag) break;
        posted_.clear();
        if (rounds_[next_ - 1].then) rounds_[next_ - 1].then();
        continue;
      }
      for (const Message& m : rounds_[next_].messages) {
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = m.send ? MPI_Isend(m.buf, count_, type_, m.peer, tag_, comm_, &r)
                        : MPI_Irecv(m.buf, count_, type_, m.peer, tag_, comm_, &r);
        if (rc != MPI_SUCCESS) error_ = rc;
        posted_.push_back(r);
      }
      ++next_;
      // A round with no messages (a process with no partner there) is done at once.
      if (posted_.empty() && rounds_[next_ - 1].then) rounds_[next_ - 1].then();
    }
    return finished();
  }

 private:
  MPI_Comm comm_;
  int tag_, count_;
  MPI_Datatype type_;
  std::vector<Round> rounds_;
  std::vector<std::vector<unsigned char>> scratch_;
  std::vector<MPI_Request> posted_;
  size_t next_ = 0;
  int error_ = MPI_SUCCESS;
};

// This process's collectives that have started and not been completed by a test or wait.
std::vector<Collective*>& running() {
  static auto* list = new std::vector<Collective*>;
  return *list;
}

Collective* owned(MPI_Request request) {
  for (Collective* c : running())
    if (reinterpret_cast<MPI_Request>(c) == request) return c;
  return nullptr;
}

bool any_owned(int count, const MPI_Request requests[]) {
  if (running().empty()) return false;
  for (int i = 0; i < count; ++i)
    if (owned(requests[i]) != nullptr) return true;
  return false;
}

void progress() {
  for (Collective* c : running()) c->advance();
}

// Ends a completed collective's request: its error, an empty status, MPI_REQUEST_NULL.
int finish(MPI_Request* request, MPI_Status* status) {
  Collective* c = owned(*request);
  auto& list = running();
  list.erase(std::find(list.begin(), list.end(), c));
  const int rc = c->error();
  delete c;
  *request = MPI_REQUEST_NULL;
  rc_smpi_set_empty_status(status, MPI_ANY_SOURCE);
  if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = rc;
  return rc;
}

// The tag of the next collective on `comm`: a count kept in an attribute of the communicator,
// so that it starts again on a communicator made anew.
int next_tag(MPI_Comm comm) {
  static int keyval = MPI_KEYVAL_INVALID;
  static int tag_ub = 0;
  if (keyval == MPI_KEYVAL_INVALID) {
    auto drop = [](MPI_Comm, int, void* value, void*) -> int {  // MPI_SUCCESS is an enum in SMPI
      delete static_cast<unsigned*>(value);
      return MPI_SUCCESS;
    };
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop, &keyval, nullptr);
    int* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub = flag ? *ub : 32767;
  }
  unsigned* count = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(comm, keyval, &count, &flag);
  if (!flag) {
    count = new unsigned(0);
    MPI_Comm_set_attr(comm, keyval, count);
  }
  return tag_ub - static_cast<int>((*count)++ % 4096);
}

// Whether the schedules here can hold `count` elements of `type` in plain byte buffers (no
// gaps, no lower bound), on an intracommunicator; otherwise SMPI's own collective runs.
bool schedulable(MPI_Comm comm, MPI_Datatype type) {
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  return !inter && lb == 0 && true_lb == 0 && extent == true_extent && extent > 0;
}

size_t bytes_of(int count, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  return static_cast<size_t>(extent) * static_cast<size_t>(count);
}

bool commutes(MPI_Op op) {
  int yes = 1;
  MPI_Op_commutative(op, &yes);
  return yes != 0;
}

int start(Collective* c, MPI_Request* request) {
  running().push_back(c);
  *request = reinterpret_cast<MPI_Request>(c);
  c->advance();
  return MPI_SUCCESS;
}

// Every request of an array, with this file's collectives as MPI_REQUEST_NULL: what SMPI may see.
std::vector<MPI_Request> smpi_part(int count, const MPI_Request requests[]) {
  std::vector<MPI_Request> part(requests, requests + count);
  for (MPI_Request& r : part)
    if (owned(r) != nullptr) r = MPI_REQUEST_NULL;
  return part;
}

MPI_Status* status_at(MPI_Status statuses[], int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

}  // namespace

extern "C" {

// MPICH's binomial tree (MPIR_Ibcast_intra_sched_binomial): the message from the parent, then
// to every child at once.
int rc_smpi_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                   MPI_Request* request) {
  if (!schedulable(comm, type)) return MPI_Ibcast(buf, count, type, root, comm, request);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  auto* c = new Collective(comm, next_tag(comm), count, type);
  const int relative = (rank - root + size) % size;
  int mask = 1;
  for (; mask < size; mask <<= 1)
    if (relative & mask) {
      c->round().messages.push_back({false, buf, (rank - mask + size) % size});
      break;
    }
  Collective::Round& sends = c->round();
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (relative + mask < size) sends.messages.push_back({true, buf, (rank + mask) % size});
  return start(c, request);
}

// MPICH's recursive doubling (MPIR_Iallreduce_intra_sched_recursive_doubling): the first
// 2 * (p - 2^k) processes pair up so that 2^k take part, each exchanging with the one whose
// rank differs in one bit, round by round; lower ranks' values first for operations that do not
// commute; the paired-off processes then get the result.
int rc_smpi_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request* request) {
  if (!schedulable(comm, type))
    return MPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t bytes = bytes_of(count, type);
  if (sendbuf != MPI_IN_PLACE && bytes > 0) std::memcpy(recvbuf, sendbuf, bytes);
  auto* c = new Collective(comm, next_tag(comm), count, type);
  void* tmp = c->scratch();
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const int rem = size - pof2;
  int newrank = rank - rem;
  if (rank < 2 * rem) {
    if (rank % 2 == 0) {
      c->round().messages.push_back({true, recvbuf, rank + 1});
      newrank = -1;
    } else {
      Collective::Round& r = c->round();
      r.messages.push_back({false, tmp, rank - 1});
      r.then = [=] { MPI_Reduce_local(tmp, recvbuf, count, type, op); };
      newrank = rank / 2;
    }
  }
  if (newrank != -1) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int newdst = newrank ^ mask;
      const int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
      Collective::Round& r = c->round();
      r.messages.push_back({true, recvbuf, dst});
      r.messages.push_back({false, tmp, dst});
      if (dst < rank)
        r.then = [=] { MPI_Reduce_local(tmp, recvbuf, count, type, op); };
      else
        r.then = [=] {
          MPI_Reduce_local(recvbuf, tmp, count, type, op);
          std::memcpy(recvbuf, tmp, bytes);
        };
    }
  }
  if (rank < 2 * rem)
    c->round().messages.push_back({rank % 2 == 1, recvbuf, rank % 2 == 1 ? rank - 1 : rank + 1});
  return start(c, request);
}

}  // extern "C"

namespace {

// MPICH's recursive doubling for scans (MPIR_Scan_intra_recursive_doubling and its exclusive
// form): each round exchanges the partial reduction of a block of ranks with the process whose
// rank differs in one bit; a lower block's value joins the result.
int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         bool exclusive, MPI_Request* request) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t bytes = bytes_of(count, type);
  auto* c = new Collective(comm, next_tag(comm), count, type);
  void* partial = c->scratch();
  void* tmp = c->scratch();
  const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  if (bytes > 0) std::memcpy(partial, mine, bytes);
  if (!exclusive && sendbuf != MPI_IN_PLACE && bytes > 0) std::memcpy(recvbuf, sendbuf, bytes);
  const bool commutative = commutes(op);
  bool have = !exclusive;  // recvbuf holds a value yet (the exclusive scan's starts empty)
  for (int mask = 1; mask < size; mask <<= 1) {
    const int dst = rank ^ mask;
    if (dst >= size) continue;
    Collective::Round& r = c->round();
    r.messages.push_back({true, partial, dst});
    r.messages.push_back({false, tmp, dst});
    if (rank > dst) {
      const bool first = !have;
      r.then = [=] {
        MPI_Reduce_local(tmp, partial, count, type, op);
        if (first)
          std::memcpy(recvbuf, tmp, bytes);
        else
          MPI_Reduce_local(tmp, recvbuf, count, type, op);
      };
      have = true;
    } else if (commutative) {
      r.then = [=] { MPI_Reduce_local(tmp, partial, count, type, op); };
    } else {
      r.then = [=] {
        MPI_Reduce_local(partial, tmp, count, type, op);
        std::memcpy(partial, tmp, bytes);
      };
    }
  }
  return start(c, request);
}

}  // namespace

extern "C" {

int rc_smpi_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm, MPI_Request* request) {
  if (!schedulable(comm, type)) return MPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request);
  return scan(sendbuf, recvbuf, count, type, op, comm, false, request);
}

int rc_smpi_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  if (!schedulable(comm, type))
    return MPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  return scan(sendbuf, recvbuf, count, type, op, comm, true, request);
}

int rc_smpi_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  charge_test();
  progress();
  if (request != nullptr && *request == MPI_REQUEST_NULL) {
    *flag = 1;
    rc_smpi_set_empty_status(status, MPI_ANY_SOURCE);
    return MPI_SUCCESS;
  }
  if (Collective* c = request != nullptr ? owned(*request) : nullptr) {
    *flag = c->finished();
    return *flag ? finish(request, status) : MPI_SUCCESS;
  }
  return MPI_Test(request, flag, status);
}

int rc_smpi_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  charge_test();
  progress();
  if (!any_owned(count, requests)) return MPI_Testall(count, requests, flag, statuses);
  *flag = 0;
  for (int i = 0; i < count; ++i)
    if (Collective* c = owned(requests[i]); c != nullptr && !c->finished())
      return MPI_SUCCESS;  // MPI_Testall completes none unless it completes all
  std::vector<MPI_Request> part = smpi_part(count, requests);
  int rc = MPI_Testall(count, part.data(), flag, statuses);
  if (!*flag) return rc;
  for (int i = 0; i < count; ++i) {
    if (owned(requests[i]) == nullptr)
      requests[i] = part[static_cast<size_t>(i)];
    else if (finish(&requests[i], status_at(statuses, i)) != MPI_SUCCESS)
      rc = MPI_ERR_IN_STATUS;
  }
  return rc;
}

int rc_smpi_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  charge_test();
  progress();
  if (!any_owned(count, requests)) return MPI_Testany(count, requests, index, flag, status);
  for (int i = 0; i < count; ++i)
    if (Collective* c = owned(requests[i]); c != nullptr && c->finished()) {
      *index = i;
      *flag = 1;
      return finish(&requests[i], status);
    }
  std::vector<MPI_Request> part = smpi_part(count, requests);
  int rc = MPI_Testany(count, part.data(), index, flag, status);
  if (*flag && *index != MPI_UNDEFINED) requests[*index] = part[static_cast<size_t>(*index)];
  if (*flag && *index == MPI_UNDEFINED) *flag = 0;  // a collective is still running
  return rc;
}

int rc_smpi_Testsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]) {
  charge_test();
  progress();
  if (!any_owned(count, requests))
    return MPI_Testsome(count, requests, outcount, indices, statuses);
  std::vector<MPI_Request> part = smpi_part(count, requests);
  int rc = MPI_Testsome(count, part.data(), outcount, indices, statuses);
  int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
  for (int k = 0; k < n; ++k) requests[indices[k]] = part[static_cast<size_t>(indices[k])];
  for (int i = 0; i < count; ++i)
    if (Collective* c = owned(requests[i]); c != nullptr && c->finished()) {
      indices[n] = i;
      if (finish(&requests[i], status_at(statuses, n)) != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS;
      ++n;
    }
  *outcount = n;  // not MPI_UNDEFINED: a collective was active
  return rc;
}

// With a collective of this file running, a wait polls (so that it advances); otherwise SMPI's
// own wait blocks the simulated process.
int rc_smpi_Wait(MPI_Request* request, MPI_Status* status) {
  if (running().empty()) return MPI_Wait(request, status);
  for (int flag = 0;;) {
    int rc = rc_smpi_Test(request, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int rc_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (running().empty()) return MPI_Waitall(count, requests, statuses);
  for (int flag = 0;;) {
    int rc = rc_smpi_Testall(count, requests, &flag, statuses);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int rc_smpi_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (running().empty()) return MPI_Waitany(count, requests, index, status);
  for (int flag = 0;;) {
    int rc = rc_smpi_Testany(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int rc_smpi_Waitsome(int count, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]) {
  if (running().empty()) return MPI_Waitsome(count, requests, outcount, indices, statuses);
  for (;;) {
    int rc = rc_smpi_Testsome(count, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
  }
}

int rc_smpi_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  progress();
  if (Collective* c = owned(request)) {
    *flag = c->finished();
    if (*flag) {
      rc_smpi_set_empty_status(status, MPI_ANY_SOURCE);
      if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = c->error();
    }
    return MPI_SUCCESS;
  }
  return MPI_Request_get_status(request, flag, status);
}

// MPI makes freeing or cancelling a nonblocking collective's request erroneous.
int rc_smpi_Request_free(MPI_Request* request) {
  if (request != nullptr && owned(*request) != nullptr) return MPI_ERR_REQUEST;
  return MPI_Request_free(request);
}

int rc_smpi_Cancel(MPI_Request* request) {
  if (request != nullptr && owned(*request) != nullptr) return MPI_ERR_REQUEST;
  return MPI_Cancel(request);
}

// Probes advance the collectives too: a process may wait in a loop of them.
void rc_smpi_progress() { progress(); }

}  // extern "C"
