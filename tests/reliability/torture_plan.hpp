// The plan of the torture test (test_torture.cpp): communicators and rounds of traffic, derived
// from a seed alone, so every process computes the same plan without talking.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace torture {

// A communicator of the plan: made from `parent` as a range (first..last:stride of the parent's
// ranks) or as a general group (the parent's ranks `group`, in that order).
struct CommPlan {
  int parent = -1;
  bool general = false;
  int first = 0, last = 0, stride = 1;
  std::vector<int> group;
  std::vector<int> members;  // world ranks, in rank order
};

// A point-to-point message (ranks of its communicator).
struct Msg {
  int comm, src, dst, tag, len;  // len in bytes: 0, or a header and a body
  bool blocking, synchronous;
  std::uint32_t seq;  // per (comm, src, dst, tag), from 0 over the whole run
};

// How the receiver of a (communicator, destination) group of messages takes them.
enum class Match { exact, any_source, any_tag, any_both };
enum class Method { irecv, probe, mprobe, iprobe };

struct RecvGroup {
  int comm, dst;
  Match match;
  Method method;
  std::vector<int> msgs;  // indices into Round::msgs, in the order the receives are made
};

// A collective: kind, root, count; members derive their contributions from (round, index).
struct Coll {
  int comm, kind, root, count;
  bool blocking;
};
constexpr int kCollKinds = 9;

struct Round {
  std::vector<Msg> msgs;
  std::vector<RecvGroup> groups;
  std::vector<Coll> colls;
};

constexpr int kTags = 3;  // few tags, so that wildcards have choices
constexpr int kHeaderBytes = 24;

class Planner {
 public:
  Planner(std::uint64_t seed, int world_size) : rng_(seed), p_(world_size) {}

  std::vector<CommPlan> comms(int count) {
    std::vector<CommPlan> out;
    CommPlan world;
    world.members.resize(p_);
    std::iota(world.members.begin(), world.members.end(), 0);
    out.push_back(world);
    std::set<std::vector<int>> seen{world.members};
    for (int tries = 0; static_cast<int>(out.size()) < count && tries < 50 * count; ++tries) {
      int parent = pick(static_cast<int>(out.size()));
      const auto& pm = out[parent].members;
      int n = static_cast<int>(pm.size());
      CommPlan c;
      c.parent = parent;
      int shape = pick(4);
      if (shape == 3 && n >= 3) {  // a general group: a shuffled subset of two or more
        std::vector<int> ranks(n);
        std::iota(ranks.begin(), ranks.end(), 0);
        std::shuffle(ranks.begin(), ranks.end(), rng_);
        ranks.resize(2 + pick(n - 1));
        c.general = true;
        c.group = ranks;
        for (int r : ranks) c.members.push_back(pm[r]);
      } else {  // a range, strided sometimes (shape 2), a janus pair (shape 1, below)
        c.first = pick(n);
        c.last = c.first + pick(n - c.first);
        c.stride = shape == 2 ? 1 + pick(3) : 1;
        c.last = c.first + (c.last - c.first) / c.stride * c.stride;
        for (int r = c.first; r <= c.last; r += c.stride) c.members.push_back(pm[r]);
      }
      if (!seen.insert(c.members).second) continue;  // a second copy of a member list
      out.push_back(c);
      if (shape == 1 && !c.general && c.last + 1 < n) {
        // janus: the range from c's last process to the parent's end shares exactly one process
        CommPlan j;
        j.parent = parent;
        j.first = c.last;
        j.last = n - 1;
        for (int r = j.first; r <= j.last; ++r) j.members.push_back(pm[r]);
        if (seen.insert(j.members).second) out.push_back(j);
      }
    }
    return out;
  }

  // seq: the next sequence number per (comm, src, dst, tag), kept across rounds.
  Round round(const std::vector<CommPlan>& comms, int messages, int collectives,
              std::map<std::array<int, 4>, std::uint32_t>* seq) {
    Round rd;
    int k = static_cast<int>(comms.size());
    for (int i = 0; i < messages; ++i) {
      int c = pick(k);
      int n = static_cast<int>(comms[c].members.size());
      Msg m{c, pick(n), pick(n), pick(kTags), length(), pick(3) == 0, pick(2) == 0, 0};
      m.seq = (*seq)[{c, m.src, m.dst, m.tag}]++;
      rd.msgs.push_back(m);
    }
    // Group by (comm, dst); each group gets one way of matching that can never strand a
    // message (see test_torture.cpp).
    for (int c = 0; c < k; ++c)
      for (int d = 0; d < static_cast<int>(comms[c].members.size()); ++d) {
        RecvGroup g{c, d, static_cast<Match>(pick(4)), static_cast<Method>(pick(4)), {}};
        for (int i = 0; i < static_cast<int>(rd.msgs.size()); ++i)
          if (rd.msgs[i].comm == c && rd.msgs[i].dst == d) g.msgs.push_back(i);
        if (g.msgs.empty()) continue;
        // Empty messages carry no header: only exact receives (which know what comes) take them.
        bool has_empty =
            std::any_of(g.msgs.begin(), g.msgs.end(), [&](int i) { return rd.msgs[i].len == 0; });
        if (has_empty) g.match = Match::exact;
        rd.groups.push_back(g);
      }
    for (auto& g : rd.groups)
      if (g.method != Method::irecv)  // taken late: their senders must not block on them
        for (int i : g.msgs) rd.msgs[i].blocking = false;
    for (int i = 0; i < collectives; ++i) {
      int c = pick(k);
      int n = static_cast<int>(comms[c].members.size());
      rd.colls.push_back(
          {c, pick(kCollKinds), pick(n), 1 + pick(pick(8) == 0 ? 3000 : 6), pick(2) == 0});
    }
    return rd;
  }

  int pick(int n) { return n <= 1 ? 0 : static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  std::mt19937_64& rng() { return rng_; }

 private:
  // Mostly small, some over the eager limit, a few empty.
  int length() {
    int r = pick(100);
    if (r < 6) return 0;
    if (r < 10) return kHeaderBytes + 100 * 1024 + pick(1000);
    if (r < 25) return kHeaderBytes + 4096 + pick(4096);
    return kHeaderBytes + pick(200);
  }

  std::mt19937_64 rng_;
  int p_;
};

}  // namespace torture
