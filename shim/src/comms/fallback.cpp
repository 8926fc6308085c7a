// The real-communicator fallback: a collective call the shim does not implement on ranges
// (windows, files, topologies, neighbourhood collectives, spawn, ...) runs on a real
// communicator made once for the range with MPI_Comm_create_group (all members are inside the
// same collective call), cached, and freed with the range.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "base/modes.h"
#include "comms/creation.h"
#include "comms/fallback.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "rangecomm/embedding.hpp"
#include "world/roots.h"

namespace rcshim {
namespace {

// Fallback communicator -> its range, so that errors MPI raises on it reach the range's own
// error handler with the fake handle.
std::unordered_map<MPI_Comm, MPI_Comm>& owners() {
  static std::unordered_map<MPI_Comm, MPI_Comm> map;
  return map;
}

void forward_error(MPI_Comm* real, int* code, ...) {
  auto it = owners().find(*real);
  if (it != owners().end())
    raise_on(it->second, *code);
  else
    raise_on(MPI_COMM_WORLD, *code);
}

// The number of tags MPI_Comm_create_group accepts on the shim's channels.
long long tag_count() {
  void* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag ? *static_cast<int*>(ub) + 1LL : 32768;
}

MPI_Errhandler forwarder() {
  static MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (eh == MPI_ERRHANDLER_NULL) MPI_Comm_create_errhandler(forward_error, &eh);
  return eh;
}

}  // namespace

void drop_fallback(FakeComm& c) {
  if (c.real == MPI_COMM_NULL) return;
  owners().erase(c.real);
  MPI_Comm_free(&c.real);  // sets it to MPI_COMM_NULL
}

}  // namespace rcshim

using namespace rcshim;

// Collective over the range's members. The tag comes from the range's identity, so creations
// for different ranges running at once on overlapping members use different tags (unless two
// identities agree modulo MPI_TAG_UB + 1).
extern "C" int rc_real_comm_of(MPI_Comm fake, MPI_Comm* real) {
  FakeComm* c = nullptr;
  if (int rc = fake_range(fake, "MPI call needing a real communicator", &c)) return rc;
  if (c->real == MPI_COMM_NULL) {
    MPI_Group group;
    int rc = range_group(c->range, &group, fallback_channel());
    if (rc != MPI_SUCCESS) return raise_on(fake, rc);
    int tag = static_cast<int>(rangecomm::Comm_context(c->range) % tag_count());
    MPI_Comm made = MPI_COMM_NULL;
    {
      Unlocked unlocked;  // a collective: other threads may need the library meanwhile
      rc = MPI_Comm_create_group(fallback_channel(), group, tag, &made);
    }
    c->real = made;
    MPI_Group_free(&group);
    if (rc != MPI_SUCCESS) return raise_on(fake, rc);
    MPI_Comm_set_errhandler(c->real, forwarder());
    owners()[c->real] = fake;
  }
  *real = c->real;
  return MPI_SUCCESS;
}

namespace {

// A call that makes a new communicator on the fallback: it takes the range's error handler.
int made_from(MPI_Comm comm, int rc, MPI_Comm* made) {
  if (rc != MPI_SUCCESS) return rc;  // MPI raised it through the forwarder already
  Locked locked;
  FakeComm* c = find_comm(comm);
  if (*made != MPI_COMM_NULL && c != nullptr) MPI_Comm_set_errhandler(*made, c->errhandler);
  return MPI_SUCCESS;
}

}  // namespace

// The real communicator of a fake one, and the library lock released for the rest of the
// call: what follows is a collective of MPI on it.
#define RC_REAL_OF(comm)                                  \
  MPI_Comm real = MPI_COMM_NULL;                          \
  if (int rc_ = rc_real_comm_of(comm, &real)) return rc_; \
  Unlocked rc_unlocked_

extern "C" int rc_fake_MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                                       const int periods[], int reorder, MPI_Comm* comm_cart) {
  RC_REAL_OF(comm);
  return made_from(comm, MPI_Cart_create(real, ndims, dims, periods, reorder, comm_cart),
                   comm_cart);
}

extern "C" int rc_fake_MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                        const int edges[], int reorder, MPI_Comm* comm_graph) {
  RC_REAL_OF(comm);
  return made_from(comm, MPI_Graph_create(real, nnodes, index, edges, reorder, comm_graph),
                   comm_graph);
}

extern "C" int rc_fake_MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                             const int degrees[], const int destinations[],
                                             const int weights[], MPI_Info info, int reorder,
                                             MPI_Comm* comm_dist_graph) {
  RC_REAL_OF(comm);
  int rc = MPI_Dist_graph_create(real, n, sources, degrees, destinations, weights, info, reorder,
                                 comm_dist_graph);
  return made_from(comm, rc, comm_dist_graph);
}

extern "C" int rc_fake_MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                                      const int sources[],
                                                      const int sourceweights[], int outdegree,
                                                      const int destinations[],
                                                      const int destweights[], MPI_Info info,
                                                      int reorder, MPI_Comm* comm_dist_graph) {
  RC_REAL_OF(comm);
  int rc =
      MPI_Dist_graph_create_adjacent(real, indegree, sources, sourceweights, outdegree,
                                     destinations, destweights, info, reorder, comm_dist_graph);
  return made_from(comm, rc, comm_dist_graph);
}

extern "C" int rc_fake_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                           MPI_Comm* newcomm) {
  RC_REAL_OF(comm);
  int rc = MPI_SUCCESS;
  {
    ForwardedToMpi forwarded(g_accelerate);  // MPICH's split types may call MPI's creations
    rc = MPI_Comm_split_type(real, split_type, key, info, newcomm);
  }
  return made_from(comm, rc, newcomm);
}

// A file needs its communicator only while MPI_File_open runs: MPI_Comm_free lets every use of
// a communicator finish, and MPI's own I/O keeps a duplicate for the file (ROMIO in MPICH and its
// derivatives, OMPIO in Open MPI). So a real communicator made for the open alone is freed on
// return, and a program keeping thousands of files open on library communicators (HDF5 opens
// each file on a duplicate of the program's) holds no real communicator for them; the range's
// fallback stays only where something else made it. Under the acceleration modes ROMIO's
// duplicate is itself a library communicator, so on MPICH such files cost no context id at all.
extern "C" int rc_fake_MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info,
                                     MPI_File* fh) {
  FakeComm* c = nullptr;
  if (int rc = fake_range(comm, "MPI_File_open", &c)) return rc;
  bool made_here = c->real == MPI_COMM_NULL;
  MPI_Comm real = MPI_COMM_NULL;
  if (int rc = rc_real_comm_of(comm, &real)) return rc;
  int rc = MPI_SUCCESS;
  {
    Unlocked unlocked;  // a collective, and ROMIO calls MPI back on library communicators
    rc = MPI_File_open(real, filename, amode, info, fh);
  }
  c = find_comm(comm);  // another thread may not free it meanwhile (MPI forbids), but look again
  if (made_here && c != nullptr && c->real == real) drop_fallback(*c);
  return rc;
}

namespace {

// splitmix64's finaliser: spreads identities and tags over the channels' tag space.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int channel_tag(std::uint64_t x) {
  return static_cast<int>(mix(x) % static_cast<std::uint64_t>(tag_count()));
}

// A real communicator of this leader and the remote one (ranks of the world): MPI's peer for
// an MPI_Intercomm_create over the library communicator `peer` where one side is MPI's. MPI's
// leaders talk on their peer (MPICH's also with a fixed tag of its own besides the program's),
// so each such call gets MPI's isolation of its own. Made on the group channel by the two
// leaders alone; its tag mixes the peer's identity with the program's tag, so creations over
// different peers, and over one peer with different tags (as MPI requires of concurrent ones),
// do not meet (unless two such running at once over the same leaders agree modulo
// MPI_TAG_UB + 1). *remote: the remote leader's rank in it.
int leaders_comm(const rangecomm::Comm& peer, int remote_world, int tag, MPI_Comm* out,
                 int* remote) {
  int me = 0;
  MPI_Comm_rank(group_channel(), &me);
  int ranks[2] = {std::min(me, remote_world), std::max(me, remote_world)};
  *remote = remote_world > me ? 1 : 0;
  MPI_Group channel, pair;
  if (int rc = MPI_Comm_group(group_channel(), &channel)) return rc;
  int rc = MPI_Group_incl(channel, 2, ranks, &pair);
  MPI_Group_free(&channel);
  if (rc != MPI_SUCCESS) return rc;
  const int pair_tag = channel_tag((std::uint64_t{rangecomm::Comm_context(peer)} << 32) ^
                                   static_cast<std::uint32_t>(tag));
  {
    Unlocked unlocked;  // collective over the two leaders
    rc = MPI_Comm_create_group(group_channel(), pair, pair_tag, out);
  }
  MPI_Group_free(&pair);
  if (rc != MPI_SUCCESS) *out = MPI_COMM_NULL;
  return rc;
}

// leaders_comm over the library communicator peer_comm, whose rank remote_leader is the remote
// leader; errors (a remote_leader outside peer_comm among them) are raised on peer_comm.
int link_leaders(MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm* link, int* other) {
  FakeComm* p = nullptr;
  if (int rc = fake_range(peer_comm, "MPI_Intercomm_create", &p)) return rc;
  const int world = p->range.rank_in_root(remote_leader);
  if (world == MPI_UNDEFINED)
    return raise_error(peer_comm, MPI_ERR_RANK,
                       "MPI_Intercomm_create: remote_leader %d is not in peer_comm (size %d)",
                       remote_leader, p->range.size());
  if (int rc = leaders_comm(p->range, world, tag, link, other)) return raise_on(peer_comm, rc);
  return MPI_SUCCESS;
}

// The real communicators an MPI_Intercomm_create of the library makes on the way (the joint one
// and its half, or the leaders' communicator: see below) are freed only when no such creation runs
// in this process any more. Open MPI 4.1 gives an intercommunicator whose context id is below its
// local communicator's an extra reference, whose release later frees whatever communicator then
// holds that id (docs/reliability.md). A creation's new id falls below its local communicator's
// when ids below it are freed on all its processes while it runs; the helpers, freed at once,
// did that to the creations other threads were running (docs/reliability.md has the shares). A
// creation runs on every process its agreement needs, so no helper frees an id there meanwhile.
// At most kMaxDeferred wait; past that a helper is freed at once (a process whose threads always
// have a creation running must not pile them up).
class CreationsRunning {
 public:
  CreationsRunning() {
    std::lock_guard<std::mutex> guard(mutex());
    ++running();
  }
  ~CreationsRunning() {
    std::vector<MPI_Comm> done;
    {
      std::lock_guard<std::mutex> guard(mutex());
      if (--running() == 0) done.swap(deferred());
    }
    for (MPI_Comm& c : done) MPI_Comm_free(&c);
  }
  CreationsRunning(const CreationsRunning&) = delete;
  CreationsRunning& operator=(const CreationsRunning&) = delete;

  // Frees *c when the last creation ends; at once when kMaxDeferred wait already (the newest
  // helper most likely holds an id above those of the creations running), or without memory
  // to keep it. Sets *c to null.
  static void free_later(MPI_Comm* c) {
    if (*c == MPI_COMM_NULL) return;
    try {
      std::lock_guard<std::mutex> guard(mutex());
      if (deferred().size() < kMaxDeferred) {
        deferred().push_back(*c);
        *c = MPI_COMM_NULL;
        return;
      }
    } catch (const std::bad_alloc&) {
    }
    MPI_Comm_free(c);
  }

 private:
  static constexpr std::size_t kMaxDeferred = 48;
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& running() {
    static int n = 0;
    return n;
  }
  static std::vector<MPI_Comm>& deferred() {
    static std::vector<MPI_Comm> comms;
    return comms;
  }
};

// What each leader tells the other about its side before an MPI_Intercomm_create over a library
// peer: whether its local communicator is the library's, its size, the leader's rank in it and
// its identity (Comm_context); then, when both are the library's, its members (world ranks).
enum { kHeadLibrary, kHeadSize, kHeadLeader, kHeadContext, kHeadInts };

// What a library communicator's leader tells its side (a broadcast on it): the error class of
// its part (MPI_SUCCESS when it went well), whether the two sides make the intercommunicator
// jointly (joint_intercomm), and then the remote side's size, leader and identity; the remote
// members follow in a second broadcast.
enum { kSideError, kSideJoint, kSideRemoteSize, kSideRemoteLeader, kSideRemoteContext, kSideInts };

// The leaders exchange what they tell each other on the library peer itself, with the program's
// tag, as MPI's leaders do on a real one (MPI requires that tag not to meet other traffic of the
// peer meanwhile). The peer is looked up afresh: the lock was released since.
int exchange_on_peer(MPI_Comm peer_comm, int remote_leader, int tag, const int* mine, int* theirs,
                     int count) {
  FakeComm* p = nullptr;
  if (int rc = fake_range(peer_comm, "MPI_Intercomm_create", &p)) return rc;
  if (remote_leader < 0 || remote_leader >= p->range.size())
    return raise_error(peer_comm, MPI_ERR_RANK,
                       "MPI_Intercomm_create: remote_leader %d is not in peer_comm (size %d)",
                       remote_leader, p->range.size());
  const rangecomm::Comm peer = p->range;  // a copy: the wait below may let other threads in
  int rc = rangecomm::Sendrecv(mine, count, MPI_INT, remote_leader, tag, theirs, count, MPI_INT,
                               remote_leader, tag, peer, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? rc : raise_on(peer_comm, rc);
}

// At the leader of a library local communicator `local` over a library peer: learns the remote
// leader's side. side (kSideInts): filled in but for kSideError. Errors are raised here, on
// peer_comm.
int meet_remote_leader(const rangecomm::Comm& local, int local_leader, MPI_Comm peer_comm,
                       int remote_leader, int tag, int* side, std::vector<int>* remote) {
  const int mine[kHeadInts] = {1, local.size(), local_leader,
                               static_cast<int>(rangecomm::Comm_context(local))};
  int theirs[kHeadInts] = {};
  if (int rc = exchange_on_peer(peer_comm, remote_leader, tag, mine, theirs, kHeadInts)) return rc;
  if (theirs[kHeadLibrary]) {
    std::vector<int> members(static_cast<std::size_t>(local.size()));
    for (int r = 0; r < local.size(); ++r) members[r] = local.rank_in_root(r);
    // Both sizes are known on both sides: the exchange sends the larger count each way.
    const int count = std::max(local.size(), std::max(theirs[kHeadSize], 0));
    members.resize(static_cast<std::size_t>(count));
    remote->assign(static_cast<std::size_t>(count), 0);
    if (int rc =
            exchange_on_peer(peer_comm, remote_leader, tag, members.data(), remote->data(), count))
      return rc;
    remote->resize(static_cast<std::size_t>(std::max(theirs[kHeadSize], 0)));
  }
  side[kSideJoint] = theirs[kHeadLibrary];
  side[kSideRemoteSize] = theirs[kHeadSize];
  side[kSideRemoteLeader] = theirs[kHeadLeader];
  side[kSideRemoteContext] = theirs[kHeadContext];
  return MPI_SUCCESS;
}

// The leader of a real local communicator over a library peer tells the other leader that its
// side is MPI's (its non-leaders may call MPI_Intercomm_create of MPI directly, so this side
// takes the intercommunicator from MPI as it is).
int tell_remote_leader(MPI_Comm peer_comm, int remote_leader, int tag) {
  const int mine[kHeadInts] = {0, 0, 0, 0};
  int theirs[kHeadInts] = {};
  return exchange_on_peer(peer_comm, remote_leader, tag, mine, theirs, kHeadInts);
}

// Both local communicators are the library's and the leaders met: the two sides make, in one
// MPI_Comm_create_group on the group channel over all their members, a real communicator of
// both, split it into the two sides and make the intercommunicator from those halves, with the
// joint communicator as the peer. The halves come from one split, so MPI gives them the same
// context id on both sides: Open MPI 4.1 lets the context-id agreements running at once in one
// process proceed in the order of their local communicators' context ids, and halves made
// separately for each side (each its own MPI_Comm_create_group) are ordered differently on the
// two sides; threads making intercommunicators at once then wait for each other across the
// processes for ever. The joint creation's tag mixes both sides' identities and the program's
// tag, and the side whose leader has the lower world rank comes first, so every member
// computes the same group and tag.
int joint_intercomm(const rangecomm::Comm& local, int local_leader, const int* side,
                    const std::vector<int>& remote, int tag, MPI_Comm* newintercomm) {
  const int local_size = local.size(), remote_size = side[kSideRemoteSize];
  const bool first = local.rank_in_root(local_leader) < remote[side[kSideRemoteLeader]];
  std::vector<int> members;
  members.reserve(static_cast<std::size_t>(local_size + remote_size));
  if (!first) members.insert(members.end(), remote.begin(), remote.end());
  for (int r = 0; r < local_size; ++r) members.push_back(local.rank_in_root(r));
  if (first) members.insert(members.end(), remote.begin(), remote.end());
  const std::uint64_t mine = rangecomm::Comm_context(local);
  const std::uint64_t theirs = static_cast<std::uint32_t>(side[kSideRemoteContext]);
  const int joint_tag = channel_tag(mix(first ? mine << 32 | theirs : theirs << 32 | mine) ^
                                    static_cast<std::uint32_t>(tag));
  MPI_Group channel, group;
  if (int rc = MPI_Comm_group(group_channel(), &channel)) return rc;
  int rc = MPI_Group_incl(channel, static_cast<int>(members.size()), members.data(), &group);
  MPI_Group_free(&channel);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm both = MPI_COMM_NULL, half = MPI_COMM_NULL;
  {
    Unlocked unlocked;  // collectives over both sides
    rc = MPI_Comm_create_group(group_channel(), group, joint_tag, &both);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_split(both, first ? 0 : 1, local.rank(), &half);
    if (rc == MPI_SUCCESS)
      rc = MPI_Intercomm_create(half, local_leader, both,
                                (first ? local_size : 0) + side[kSideRemoteLeader], tag,
                                newintercomm);
    CreationsRunning::free_later(&half);
    CreationsRunning::free_later(&both);
  }
  MPI_Group_free(&group);
  return rc;
}

}  // namespace

// MPI_Intercomm_create with a library communicator as local_comm, or as peer_comm at a leader.
// Only the leaders use peer_comm, so a library one cannot be made real (that is collective over
// it): over a library peer the leaders tell each other on it whether their local communicators
// are the library's, and a library local communicator's leader tells its side (a broadcast on
// it). Both the library's: the two sides make the intercommunicator jointly (joint_intercomm).
// Otherwise MPI makes it from this side's real local communicator (a library one's fallback),
// with a real communicator of the two leaders (leaders_comm) or the program's real peer as the
// peer. Over a real peer the leaders exchange
// nothing first: the other side may be MPI's own MPI_Intercomm_create, which a message of the
// library's on the peer would confuse.
extern "C" int rc_fake_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                                            MPI_Comm peer_comm, int remote_leader, int tag,
                                            MPI_Comm* newintercomm) {
  CreationsRunning running;
  const bool library_local = rc_is_fake_comm(local_comm);
  rangecomm::Comm local;  // a copy: the lock is released below
  int me = MPI_UNDEFINED, local_size = 0;
  if (library_local) {
    FakeComm* c = nullptr;
    if (int rc = fake_range(local_comm, "MPI_Intercomm_create", &c)) return rc;
    local = c->range;
    me = local.rank();
    local_size = local.size();
  } else {
    MPI_Comm_rank(local_comm, &me);
    MPI_Comm_size(local_comm, &local_size);
  }
  if (local_leader < 0 || local_leader >= local_size)
    return raise_error(local_comm, MPI_ERR_RANK,
                       "MPI_Intercomm_create: local_leader %d is not in local_comm (size %d)",
                       local_leader, local_size);
  const bool library_peer = me == local_leader && rc_is_fake_comm(peer_comm);
  MPI_Comm link = MPI_COMM_NULL;  // the leaders' own communicator over a library peer
  int side[kSideInts] = {MPI_SUCCESS, 0, 0, 0, 0};
  std::vector<int> remote;
  int rc = MPI_SUCCESS;
  if (library_local) {
    if (library_peer)
      rc = meet_remote_leader(local, local_leader, peer_comm, remote_leader, tag, side, &remote);
    if (me == local_leader && rc != MPI_SUCCESS) MPI_Error_class(rc, &side[kSideError]);
    int bc = rangecomm::Bcast(side, kSideInts, MPI_INT, local_leader, local);
    if (bc == MPI_SUCCESS && side[kSideError] == MPI_SUCCESS && side[kSideJoint]) {
      remote.resize(static_cast<std::size_t>(side[kSideRemoteSize]));
      bc = rangecomm::Bcast(remote.data(), side[kSideRemoteSize], MPI_INT, local_leader, local);
    }
    if (bc != MPI_SUCCESS || side[kSideError] != MPI_SUCCESS) {
      if (me == local_leader && rc != MPI_SUCCESS) return rc;  // raised already
      if (bc != MPI_SUCCESS) return raise_on(local_comm, bc);
      return raise_error(local_comm, side[kSideError],
                         "MPI_Intercomm_create: the local leader (rank %d) failed", local_leader);
    }
    if (side[kSideJoint]) {
      rc = joint_intercomm(local, local_leader, side, remote, tag, newintercomm);
      if (rc != MPI_SUCCESS) return raise_on(local_comm, rc);
      return made_from(local_comm, rc, newintercomm);
    }
  } else if (library_peer) {
    if (int rc_ = tell_remote_leader(peer_comm, remote_leader, tag)) return rc_;
  }
  // One side is MPI's: the leaders need a real communicator as MPI's peer.
  int other = 0;
  if (library_peer)
    if (int rc_ = link_leaders(peer_comm, remote_leader, tag, &link, &other)) return rc_;
  // MPI makes it from this side's real local communicator (the fallback of a library one).
  MPI_Comm real_local = local_comm;
  if (library_local) {
    if (int rc_ = rc_real_comm_of(local_comm, &real_local)) {
      CreationsRunning::free_later(&link);
      return rc_;
    }
  }
  MPI_Comm peer = peer_comm;
  if (library_peer) {
    peer = link;
    remote_leader = other;
  } else if (rc_is_fake_comm(peer_comm)) {
    peer = MPI_COMM_NULL;  // not significant here
  }
  {
    Unlocked unlocked;
    rc = MPI_Intercomm_create(real_local, local_leader, peer, remote_leader, tag, newintercomm);
    CreationsRunning::free_later(&link);
  }
  if (rc != MPI_SUCCESS || !library_local) return rc;
  return made_from(local_comm, rc, newintercomm);
}
