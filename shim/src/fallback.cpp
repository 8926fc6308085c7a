// The real-communicator fallback: a collective call the shim does not implement on ranges
// (windows, files, topologies, neighbourhood collectives, spawn, ...) runs on a real
// communicator made once for the range with MPI_Comm_create_group (all members are inside the
// same collective call), cached, and freed with the range.
#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "objects.h"
#include "p2p_support.h"
#include "rangecomm/embedding.hpp"

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

void forget_fallback(MPI_Comm real) { owners().erase(real); }

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

namespace {

// A real communicator of this leader and the remote one (ranks of the world), for one
// MPI_Intercomm_create over the library communicator `peer`: MPI's leaders talk on the peer
// communicator (MPICH with a tag of its own besides the program's), so each library peer needs
// MPI's isolation of its own. Made on the group channel by the two leaders alone; its tag mixes
// the peer's identity with the program's tag, so creations over different peers, and over one
// peer with different tags (as MPI requires of concurrent ones), do not meet (unless two such
// running at once over the same leaders agree modulo MPI_TAG_UB + 1). *remote: the remote
// leader's rank in it.
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
  std::uint64_t x = (std::uint64_t{rangecomm::Comm_context(peer)} << 32) ^
                    static_cast<std::uint32_t>(tag);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64's finaliser
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  {
    Unlocked unlocked;  // collective over the two leaders
    rc = MPI_Comm_create_group(group_channel(), pair,
                               static_cast<int>(x % static_cast<std::uint64_t>(tag_count())), out);
  }
  MPI_Group_free(&pair);
  return rc;
}

}  // namespace

// Only the leaders use peer_comm, so a fake one cannot be made real (that is collective over
// it): the leaders make a real communicator of the two of them instead (leaders_comm).
extern "C" int rc_fake_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                                            MPI_Comm peer_comm, int remote_leader, int tag,
                                            MPI_Comm* newintercomm) {
  MPI_Comm local = local_comm;
  if (rc_is_fake_comm(local_comm))
    if (int rc = rc_real_comm_of(local_comm, &local)) return rc;
  int me = MPI_UNDEFINED;
  MPI_Comm_rank(local, &me);
  MPI_Comm peer = peer_comm, leaders = MPI_COMM_NULL;
  if (me == local_leader && rc_is_fake_comm(peer_comm)) {
    FakeComm* p = nullptr;
    if (int rc = fake_range(peer_comm, "MPI_Intercomm_create", &p)) return rc;
    int world = p->range.rank_in_root(remote_leader);
    if (world == MPI_UNDEFINED)
      return raise_error(peer_comm, MPI_ERR_RANK,
                         "MPI_Intercomm_create: remote_leader %d is not "
                         "in peer_comm (size %d)",
                         remote_leader, p->range.size());
    if (int rc = leaders_comm(p->range, world, tag, &leaders, &remote_leader))
      return raise_on(peer_comm, rc);
    peer = leaders;
  } else if (rc_is_fake_comm(peer_comm)) {
    peer = MPI_COMM_NULL;  // not significant here
  }
  int rc = MPI_SUCCESS;
  {
    Unlocked unlocked;
    rc = MPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newintercomm);
    if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  }
  if (rc != MPI_SUCCESS || !rc_is_fake_comm(local_comm)) return rc;
  return made_from(local_comm, rc, newintercomm);
}
