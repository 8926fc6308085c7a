// MPI-4 partitioned point-to-point on range communicators: MPI_Psend_init, MPI_Precv_init,
// MPI_Pready(_range, _list), MPI_Parrived, and the persistent requests they make (MPI_Start(all),
// the wait/test families, MPI_Request_get_status and MPI_Request_free go through the ordinary
// fake-request code: requests.cpp, completion.cpp, request_arrays.cpp).
//
// Where the traffic goes. Every partitioned request travels on a *hidden channel*: a library
// communicator of just its two processes, made locally from the program's range with
// rangecomm::Split_Comm_salted(range, lo, hi, hi - lo, kPartitionedLevels, salt), lo and hi
// being the two ranks. Both processes derive the same identity without a message, because
//  * the creation's digest holds the pair, the levels and salt = 2 * tag + (whether the sender
//    is the lower rank) + 1: it names (sender, receiver, tag) and nothing else the shim creates
//    (its own creations use levels 1 and 2, docs/tag-layout.md);
//  * the k-th creation with one digest from one parent is the same communicator at every
//    member: the sender counts its Psend_inits to that receiver with that tag on this range,
//    the receiver its Precv_inits from that sender with that tag, so the k-th of one side pairs
//    with the k-th of the other - exactly MPI's rule that partitioned initialisations match in
//    the order they are made per (peer, tag, communicator). Wildcards are refused, so nothing
//    else can decide a match.
// A hidden channel is a communicator of its own identity, so by core's isolation claim
// (docs/tag-layout.md, "Why messages cannot cross") no receive or probe on the program's range -
// MPI_ANY_SOURCE and MPI_ANY_TAG included - ever sees a partitioned message, and no ordinary
// send ever reaches a partitioned receive. Core's own machinery (slots, bindings, the matching
// engine, messages to self) carries it; nothing in core had to change, and the pass-through path
// of real handles is untouched.
// Why not a reserved kind of tag, or one hidden communicator per range with the init order's
// sequence number in the tag: the tag's payload is the user's tag (all 15 bits, larger tags
// travelling with a header) and its kind bit
// belongs to collectives (docs/tag-layout.md), so there is no room left without changing the
// layout every message uses; a channel per request needs no room and makes MPI's matching do the
// pairing.
// A partitioned send to self cannot use the count: one process makes both sides' creations, so
// the k-th send and the k-th receive would count twice. Those pairs meet in a queue per
// (communicator, tag) instead: whichever init comes first makes the channel, the other takes it.
//
// Data. Each MPI_Start begins a round. A receive posts one ordinary receive of the whole buffer
// on its channel at MPI_Start; a send posts one ordinary send of the whole buffer when its last
// partition is marked ready (at MPI_Start when it has none). With MPI_PROC_NULL both are
// MPI_PROC_NULL operations on the program's range: the receive completes at MPI_Start, the send
// once its last partition is ready (a send completing earlier would make the program's later
// MPI_Pready calls erroneous). One sender's rounds on one channel are one sender, communicator
// and tag, so MPI's ordering pairs the n-th round's message with the n-th round's receive even
// when the sender runs a round ahead. Sender and receiver partition counts may differ: only the
// total type signature has to match, as for any message. MPI_Parrived reports a partition once
// the whole message is in the buffer (MPI allows a partition to be reported late, never early).
// One message per round costs what an ordinary persistent send costs; a message per partition
// would let MPI_Parrived answer earlier, but the receiver cannot know the sender's partitioning
// without a message more.
#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "rangecomm/embedding.hpp"
#include "requests/requests.h"

namespace rcshim {

struct Partitioned {
  bool send = false;
  void* buf = nullptr;
  int partitions = 0;
  int total = 0;                          // elements: partitions x count
  MPI_Datatype type = MPI_DATATYPE_NULL;  // held by the request (its `keep`)
  int peer = MPI_PROC_NULL;               // in the program's communicator
  int tag = 0;
  rangecomm::Comm channel;           // the hidden channel (the program's range for MPI_PROC_NULL)
  int channel_peer = MPI_PROC_NULL;  // the peer's rank in channel
  // Sends: the partitions marked ready in this round, how many are still missing, and whether
  // this round's message is posted.
  std::vector<unsigned char> ready;
  int missing = 0;
  bool posted = false;
};

bool partitioned_held(const FakeRequest& r) {
  const Partitioned& p = *r.partitioned;
  return p.send && r.active && !p.posted;
}

void partitioned_status(FakeRequest& r) {
  const Partitioned& p = *r.partitioned;
  if (!p.send && p.peer != MPI_PROC_NULL) r.status.MPI_SOURCE = p.peer;  // the only sender
}

}  // namespace rcshim

#if defined(RC_HAVE_MPI_Psend_init) && defined(RC_HAVE_MPI_Precv_init) && \
    defined(RC_HAVE_MPI_Pready) && defined(RC_HAVE_MPI_Pready_range) &&   \
    defined(RC_HAVE_MPI_Pready_list) && defined(RC_HAVE_MPI_Parrived)

using namespace rcshim;

namespace {

// Above every nesting level the shim's own creations use, so that the hidden channels' digests
// (and their repeat counts) are theirs alone.
constexpr int kPartitionedLevels = 1 << 20;

// Tags go up to MPI_TAG_UB (2^31 - 1 on Open MPI): 64 bits hold them.
std::uint64_t channel_salt(int tag, bool lower_sends) {
  return 2 * static_cast<std::uint64_t>(tag) + (lower_sends ? 0 : 1) + 1;
}

// Sends and receives to self waiting for their other side, per (communicator handle, tag).
struct SelfPending {
  rangecomm::Comm owner;  // the communicator's range (its handle may be reused by another)
  std::deque<rangecomm::Comm> sends, recvs;  // channels made by one side, not yet taken
};
std::map<std::pair<unsigned long long, int>, SelfPending>& self_pending() {
  // Never destroyed: no range is released during static destruction, after MPI_Finalize.
  static auto* table = new std::map<std::pair<unsigned long long, int>, SelfPending>();
  return *table;
}

int self_channel(MPI_Comm comm, const rangecomm::Comm& range, bool send, int tag,
                 rangecomm::Comm* out) {
  auto& table = self_pending();
  auto key = std::make_pair(handle_value(comm), tag);
  auto it = table.find(key);
  if (it != table.end() && it->second.owner != range) {  // left from a freed communicator
    table.erase(it);
    it = table.end();
  }
  if (it != table.end()) {
    auto& other = send ? it->second.recvs : it->second.sends;
    if (!other.empty()) {
      *out = std::move(other.front());
      other.pop_front();
      if (it->second.sends.empty() && it->second.recvs.empty()) table.erase(it);
      return MPI_SUCCESS;
    }
  }
  int me = range.rank();
  if (int rc = rangecomm::Split_Comm_salted(range, me, me, 1, kPartitionedLevels,
                                            channel_salt(tag, true), out))
    return raise_on(comm, rc);
  SelfPending& e = table[key];
  if (e.owner.is_null()) e.owner = range;
  (send ? e.sends : e.recvs).push_back(*out);
  return MPI_SUCCESS;
}

// The hidden channel of a partitioned request between this process and p->peer (see the top).
int make_channel(MPI_Comm comm, const rangecomm::Comm& range, Partitioned* p) {
  int me = range.rank();
  if (p->peer == MPI_PROC_NULL) {
    p->channel = range;
    p->channel_peer = MPI_PROC_NULL;
    return MPI_SUCCESS;
  }
  if (p->peer == me) {
    p->channel_peer = 0;
    return self_channel(comm, range, p->send, p->tag, &p->channel);
  }
  int lo = std::min(me, p->peer), hi = std::max(me, p->peer);
  int sender = p->send ? me : p->peer;
  p->channel_peer = p->peer < me ? 0 : 1;
  int rc = rangecomm::Split_Comm_salted(range, lo, hi, hi - lo, kPartitionedLevels,
                                        channel_salt(p->tag, sender == lo), &p->channel);
  return rc == MPI_SUCCESS ? rc : raise_on(comm, rc);
}

// A round's whole message on the hidden channel.
int send_round(const Partitioned& p, rangecomm::Request* inner) {
  return rangecomm::Isend(p.buf, p.total, p.type, p.channel_peer, p.tag, p.channel, inner);
}

// Posts this round's message of a send whose partitions are all ready. A failure completes the
// request with the error, so that nobody waits for a message that never goes.
int post_send(FakeRequest& r) {
  Partitioned& p = *r.partitioned;
  p.posted = true;
  int rc = send_round(p, &r.inner);
  if (rc == MPI_SUCCESS) return rc;
  r.done = true;
  r.rc = rc;
  set_empty_status(&r.status);
  return raise_on(r.comm, rc);
}

int init(bool send, void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int peer,
         int tag, MPI_Comm comm, MPI_Request* request, const char* fn) {
  RC_FAKE_RANGE(fn);
  if (request == nullptr) return raise_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
  if (partitions < 0)
    return raise_error(comm, MPI_ERR_ARG, "%s: partitions %d is negative", fn, partitions);
  if (count < 0)
    return raise_error(comm, MPI_ERR_COUNT, "%s: count %lld is negative", fn,
                       static_cast<long long>(count));
  if (partitions > 0 && count > INT_MAX / partitions)
    return raise_error(comm, MPI_ERR_COUNT,
                       "%s: %d partitions of %lld elements are above what ranges take (%d)", fn,
                       partitions, static_cast<long long>(count), INT_MAX);
  if (datatype == MPI_DATATYPE_NULL)
    return raise_error(comm, MPI_ERR_TYPE, "%s: datatype is MPI_DATATYPE_NULL", fn);
  const char* who = send ? "dest" : "source";
  if (peer == MPI_ANY_SOURCE)
    return raise_error(comm, MPI_ERR_RANK,
                       "%s: %s MPI_ANY_SOURCE (partitioned communication "
                       "takes no wildcards)",
                       fn, who);
  if (peer != MPI_PROC_NULL && (peer < 0 || peer >= range.size()))
    return raise_error(comm, MPI_ERR_RANK, "%s: %s %d is outside the communicator's ranks 0..%d",
                       fn, who, peer, range.size() - 1);
  if (tag == MPI_ANY_TAG)
    return raise_error(comm, MPI_ERR_TAG,
                       "%s: tag MPI_ANY_TAG (partitioned communication takes no wildcards)", fn);
  if (tag < 0 || tag > rangecomm::max_user_tag())
    return raise_error(comm, MPI_ERR_TAG, "%s: tag %d is outside 0..%d", fn, tag,
                       rangecomm::max_user_tag());
  FakeRequest* r = nullptr;
  if (int rc = new_request(comm, request, &r)) return rc;
  auto p = std::make_shared<Partitioned>();
  p->send = send;
  p->buf = buf;
  p->partitions = partitions;
  p->total = partitions * static_cast<int>(count);
  p->type = held_type(datatype, &r->keep);
  p->peer = peer;
  p->tag = tag;
  if (send) p->ready.assign(static_cast<size_t>(partitions), 0);
  if (int rc = make_channel(comm, range, p.get())) {
    request_table().release(rc_fake_request_index(*request));
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  std::shared_ptr<Partitioned> state = p;
  if (send) {
    // A round: nothing is ready; the message goes at once when there is nothing to wait for.
    r->start = [state](rangecomm::Request* inner) {
      std::fill(state->ready.begin(), state->ready.end(), 0);
      state->missing = state->partitions;
      state->posted = state->missing == 0;
      return state->posted ? send_round(*state, inner) : MPI_SUCCESS;
    };
  } else {
    r->start = [state](rangecomm::Request* inner) {
      return rangecomm::Irecv(state->buf, state->total, state->type, state->channel_peer,
                              state->tag, state->channel, inner);
    };
  }
  r->partitioned = std::move(p);
  r->active = false;
  return MPI_SUCCESS;
}

// The active partitioned send behind request, or the error (MPI_ERR_REQUEST, as MPICH gives
// for an inactive or wrong request).
int active_send(MPI_Request request, const char* fn, FakeRequest** out) {
  if (int rc = get_request(request, fn, out)) return rc;
  FakeRequest& r = **out;
  if (!r.partitioned || !r.partitioned->send)
    return raise_error(r.comm, MPI_ERR_REQUEST, "%s: the request is not a partitioned send", fn);
  if (!r.active)
    return raise_error(r.comm, MPI_ERR_REQUEST,
                       "%s: the partitioned send is inactive (not started, or its round was "
                       "completed)",
                       fn);
  return MPI_SUCCESS;
}

// Marks partitions partition(i) for i in 0..n-1 ready, all or none: a partition outside the
// request's, or one already ready in this round (twice in the list included), is an
// MPI_ERR_ARG error and marks nothing. The last one posts the round's message.
template <class Partition>
int mark_ready(MPI_Request request, int n, Partition partition, const char* fn) {
  FakeRequest* r = nullptr;
  if (int rc = active_send(request, fn, &r)) return rc;
  Partitioned& p = *r->partitioned;
  for (int i = 0; i < n; ++i) {
    int k = partition(i);
    const char* problem = k < 0 || k >= p.partitions ? "is not a partition of the request"
                          : p.ready[k]               ? "is already marked ready in this round"
                                                     : nullptr;
    if (problem != nullptr) {
      for (int j = 0; j < i; ++j) p.ready[partition(j)] = 0;
      return raise_error(r->comm, MPI_ERR_ARG, "%s: partition %d %s (partitions 0..%d)", fn, k,
                         problem, p.partitions - 1);
    }
    p.ready[k] = 1;
  }
  p.missing -= n;
  if (p.missing == 0 && !p.posted) return post_send(*r);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int rc_fake_MPI_Psend_init(const void* buf, int partitions, MPI_Count count,
                                      MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                      MPI_Info, MPI_Request* request) {
  return init(true, const_cast<void*>(buf), partitions, count, datatype, dest, tag, comm, request,
              "MPI_Psend_init");
}

extern "C" int rc_fake_MPI_Precv_init(void* buf, int partitions, MPI_Count count,
                                      MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                      MPI_Info, MPI_Request* request) {
  return init(false, buf, partitions, count, datatype, source, tag, comm, request,
              "MPI_Precv_init");
}

extern "C" int rc_fake_MPI_Pready(int partition, MPI_Request request) {
  return mark_ready(
      request, 1, [=](int) { return partition; }, "MPI_Pready");
}

extern "C" int rc_fake_MPI_Pready_range(int partition_low, int partition_high,
                                        MPI_Request request) {
  if (partition_low > partition_high) {
    FakeRequest* r = nullptr;
    if (int rc = active_send(request, "MPI_Pready_range", &r)) return rc;
    return raise_error(r->comm, MPI_ERR_ARG,
                       "MPI_Pready_range: partition_low %d is above "
                       "partition_high %d",
                       partition_low, partition_high);
  }
  long long n = static_cast<long long>(partition_high) - partition_low + 1;
  return mark_ready(
      request, n > INT_MAX ? INT_MAX : static_cast<int>(n),
      [=](int i) { return partition_low + i; }, "MPI_Pready_range");
}

// The partition list is `int[]` in MPICH 4.0 and Open MPI 5, `const int[]` in MPICH 4.2 (as in
// the standard): the definition takes the type this mpi.h declares.
template <class>
struct PartitionListOf;
template <class A, class B, class C>
struct PartitionListOf<int (*)(A, B, C)> {
  using type = B;
};
using PartitionList = PartitionListOf<decltype(&rc_fake_MPI_Pready_list)>::type;

extern "C" int rc_fake_MPI_Pready_list(int length, PartitionList array_of_partitions,
                                       MPI_Request request) {
  if (length < 0 || (length > 0 && array_of_partitions == nullptr)) {
    FakeRequest* r = nullptr;
    if (int rc = active_send(request, "MPI_Pready_list", &r)) return rc;
    if (length < 0)
      return raise_error(r->comm, MPI_ERR_ARG, "MPI_Pready_list: length %d is negative", length);
    return raise_error(r->comm, MPI_ERR_ARG,
                       "MPI_Pready_list: array_of_partitions is NULL (length %d)", length);
  }
  return mark_ready(
      request, length, [=](int i) { return array_of_partitions[i]; }, "MPI_Pready_list");
}

// On a send, an MPI_ERR_REQUEST error (as MPICH answers); on an inactive receive (before
// MPI_Start, after completion), flag = true.
extern "C" int rc_fake_MPI_Parrived(MPI_Request request, int partition, int* flag) {
  FakeRequest* r = nullptr;
  if (int rc = get_request(request, "MPI_Parrived", &r)) return rc;
  if (!r->partitioned || r->partitioned->send)
    return raise_error(r->comm, MPI_ERR_REQUEST,
                       "MPI_Parrived: the request is not a partitioned receive");
  // MPI 4.0, 4.2.2: an inactive request gives flag = true (as MPICH 4.1 and later do).
  if (!r->active) {
    if (flag == nullptr) return raise_error(r->comm, MPI_ERR_ARG, "MPI_Parrived: flag is NULL");
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (partition < 0 || partition >= r->partitioned->partitions)
    return raise_error(r->comm, MPI_ERR_ARG,
                       "MPI_Parrived: partition %d is not a partition of the request (0..%d)",
                       partition, r->partitioned->partitions - 1);
  if (flag == nullptr) return raise_error(r->comm, MPI_ERR_ARG, "MPI_Parrived: flag is NULL");
  *flag = poll(*r) ? 1 : 0;
  return MPI_SUCCESS;
}

// A program that polls a real partitioned receive must still move range operations along.
extern "C" int rc_blocking_MPI_Parrived(MPI_Request request, int partition, int* flag) {
  progress_locked();
  return MPI_Parrived(request, partition, flag);
}

#endif  // RC_HAVE_MPI_Psend_init ...
