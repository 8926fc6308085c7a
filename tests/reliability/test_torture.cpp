// The torture test: random trees and overlaps of communicators (nested and strided ranges,
// janus pairs, size-1 ranges, general groups), random point-to-point traffic (blocking and
// nonblocking, synchronous, specific and wildcard sources and tags, probes, matched probes,
// empty and rendezvous-sized messages, messages to self) interleaved with random blocking and
// nonblocking collectives, completed in random orders. Every payload says where it comes from
// and carries a checksum; every receive is checked against its status and its receive's
// envelope, every (sender, communicator, tag) stream for MPI's order, every round for exactly
// the planned messages (nothing lost, duplicated or delivered to another communicator), and
// the whole run's counts per pair of processes against the senders'.
//
// No deadlock by construction: every process posts its nonblocking receives before any send;
// a message taken by a probe is never sent blocking; blocking collectives follow one global
// order; the rounds are separated by a barrier of the library. Each (communicator,
// destination) group of messages is taken in one way that cannot strand a message: exact
// receives, MPI_ANY_SOURCE per tag, MPI_ANY_TAG per source, or both wildcards.
//
// RANGECOMM_TORTURE_SEED and RANGECOMM_TORTURE_ROUNDS change the seed and the number of
// rounds (docs/reliability.md); CI runs the defaults.
#include <rangecomm/rangecomm.hpp>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "torture_plan.hpp"

using rangecomm::Comm;
using rangecomm::Request;
using namespace torture;

namespace {

struct Header {
  std::uint32_t comm, src_world, tag, seq, len, checksum;
};
static_assert(sizeof(Header) == kHeaderBytes, "header layout");

std::uint32_t checksum(const unsigned char* p, std::size_t n) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

std::vector<unsigned char> payload(const Msg& m, int src_world) {
  std::vector<unsigned char> b(static_cast<std::size_t>(m.len));
  if (m.len == 0) return b;
  std::uint32_t x = m.seq * 2654435761u ^ static_cast<std::uint32_t>(m.comm * 977 + src_world);
  for (std::size_t i = kHeaderBytes; i < b.size(); ++i)
    b[i] = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  Header h{static_cast<std::uint32_t>(m.comm),
           static_cast<std::uint32_t>(src_world),
           static_cast<std::uint32_t>(m.tag),
           m.seq,
           static_cast<std::uint32_t>(m.len),
           checksum(b.data() + kHeaderBytes, b.size() - kHeaderBytes)};
  std::memcpy(b.data(), &h, sizeof h);
  return b;
}

long long contribution(int round, int coll, int rank, int j) {
  return (1LL * round * 1315423 + 1LL * coll * 265443 + rank * 97LL + j) % 1000003;
}

struct Failure {
  std::string text;
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
};
void Failure::add(const char* fmt, ...) {
  if (text.size() > 2000) return;
  char line[400];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  text += line;
  text += '\n';
}

// One round's work on one process.
class RoundRun {
 public:
  RoundRun(int round, const Round& rd, const std::vector<CommPlan>& plan,
           const std::vector<Comm>& comms, Failure* fail, std::vector<long long>* sent,
           std::vector<long long>* received)
      : round_(round),
        rd_(rd),
        plan_(plan),
        comms_(comms),
        fail_(fail),
        sent_(sent),
        received_(received) {}

  void run(std::mt19937_64& local_rng) {
    for (size_t i = 0; i < rd_.colls.size(); ++i)
      if (!rd_.colls[i].blocking) start_coll(static_cast<int>(i));
    for (size_t g = 0; g < rd_.groups.size(); ++g)
      if (mine(rd_.groups[g]) && rd_.groups[g].method == Method::irecv)
        post_group(static_cast<int>(g));
    for (size_t i = 0; i < rd_.msgs.size(); ++i) send(static_cast<int>(i));
    for (size_t i = 0; i < rd_.colls.size(); ++i)
      if (rd_.colls[i].blocking) start_coll(static_cast<int>(i));
    for (size_t g = 0; g < rd_.groups.size(); ++g)
      if (mine(rd_.groups[g]) && rd_.groups[g].method != Method::irecv)
        probe_group(static_cast<int>(g));
    complete_all(local_rng);
    check_round();
  }

 private:
  struct Pending {
    enum Kind { send, recv, coll } kind;
    int index;  // message, group or collective
    int src_arg = 0, tag_arg = 0, post = 0;
    std::vector<unsigned char> buf;
    std::vector<long long> in, out;
    Pending(Kind k, int i, int src = 0, int tag = 0, int post_index = 0)
        : kind(k), index(i), src_arg(src), tag_arg(tag), post(post_index) {}
  };

  int rank_in(int c) const { return comms_[c].is_null() ? -1 : comms_[c].rank(); }
  bool mine(const RecvGroup& g) const { return rank_in(g.comm) == g.dst; }

  void envelope(const RecvGroup& g, const Msg& m, int* src, int* tag) const {
    bool any_src = g.match == Match::any_source || g.match == Match::any_both;
    bool any_tag = g.match == Match::any_tag || g.match == Match::any_both;
    *src = any_src ? MPI_ANY_SOURCE : m.src;
    *tag = any_tag ? MPI_ANY_TAG : m.tag;
  }
  int capacity(const RecvGroup& g, const Msg& m) const {
    if (g.match == Match::exact) return m.len;
    int most = 0;
    for (int i : g.msgs) most = std::max(most, rd_.msgs[i].len);
    return most;
  }

  void post_group(int gi) {
    const RecvGroup& g = rd_.groups[gi];
    for (int i : g.msgs) {
      Pending p(Pending::recv, i);
      envelope(g, rd_.msgs[i], &p.src_arg, &p.tag_arg);
      p.buf.resize(static_cast<size_t>(capacity(g, rd_.msgs[i])));
      p.post = posted_++;
      pending_.push_back(std::move(p));
      requests_.emplace_back();
      int rc = rangecomm::Irecv(
          pending_.back().buf.data(), static_cast<int>(pending_.back().buf.size()), MPI_BYTE,
          pending_.back().src_arg, pending_.back().tag_arg, comms_[g.comm], &requests_.back());
      if (rc != MPI_SUCCESS) fail_->add("round %d: Irecv failed (%d)", round_, rc);
    }
  }

  void send(int i) {
    const Msg& m = rd_.msgs[i];
    if (rank_in(m.comm) != m.src) return;
    const Comm& c = comms_[m.comm];
    int dst_world = plan_[m.comm].members[m.dst];
    ++(*sent_)[dst_world];
    std::vector<unsigned char> b = payload(m, mpitest::world_rank());
    int rc;
    if (m.blocking) {
      rc = m.synchronous ? rangecomm::Ssend(b.data(), m.len, MPI_BYTE, m.dst, m.tag, c)
                         : rangecomm::Send(b.data(), m.len, MPI_BYTE, m.dst, m.tag, c);
    } else {
      Pending p(Pending::send, i);
      p.buf = std::move(b);
      pending_.push_back(std::move(p));
      requests_.emplace_back();
      auto& buf = pending_.back().buf;
      rc = m.synchronous
               ? rangecomm::Issend(buf.data(), m.len, MPI_BYTE, m.dst, m.tag, c, &requests_.back())
               : rangecomm::Isend(buf.data(), m.len, MPI_BYTE, m.dst, m.tag, c, &requests_.back());
    }
    if (rc != MPI_SUCCESS) fail_->add("round %d: send of message %d failed (%d)", round_, i, rc);
  }

  // Probe-style receives, one message at a time in the group's order.
  void probe_group(int gi) {
    const RecvGroup& g = rd_.groups[gi];
    const Comm& c = comms_[g.comm];
    for (int i : g.msgs) {
      int src = 0, tag = 0;
      envelope(g, rd_.msgs[i], &src, &tag);
      MPI_Status st;
      int rc = MPI_SUCCESS, count = 0;
      std::vector<unsigned char> buf;
      if (g.method == Method::mprobe) {
        rangecomm::Message msg;
        rc = rangecomm::Mprobe(src, tag, c, &msg, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        buf.resize(static_cast<size_t>(count));
        if (rc == MPI_SUCCESS) rc = rangecomm::Mrecv(buf.data(), count, MPI_BYTE, &msg, &st);
      } else {
        if (g.method == Method::probe) {
          rc = rangecomm::Probe(src, tag, c, &st);
        } else {
          for (int flag = 0; rc == MPI_SUCCESS && !flag;)
            rc = rangecomm::Iprobe(src, tag, c, &flag, &st);
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        buf.resize(static_cast<size_t>(count));
        if (rc == MPI_SUCCESS)
          rc = rangecomm::Recv(buf.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, c, &st);
      }
      if (rc != MPI_SUCCESS) {
        fail_->add("round %d: probe-style receive failed (%d)", round_, rc);
        continue;
      }
      Pending p(Pending::recv, i, src, tag, posted_++);
      p.buf = std::move(buf);
      check_recv(p, st);
    }
  }

  void start_coll(int ci) {
    const Coll& k = rd_.colls[ci];
    int me = rank_in(k.comm);
    if (me < 0) return;
    const Comm& c = comms_[k.comm];
    int n = c.size(), cnt = k.count;
    Pending p(Pending::coll, ci);
    auto fill = [&](std::vector<long long>& v, int size, auto value) {
      v.resize(static_cast<size_t>(size));
      for (int j = 0; j < size; ++j) v[j] = value(j);
    };
    auto own = [&](int j) { return contribution(round_, ci, me, j); };
    switch (k.kind) {
      case 0:
        fill(p.out, cnt,
             [&](int j) { return me == k.root ? contribution(round_, ci, k.root, j) : -1; });
        break;
      case 1:
      case 2:
      case 5:
      case 6:
        fill(p.in, cnt, own);
        fill(p.out, cnt, [](int) { return -1LL; });
        break;
      case 3:
      case 7:
        fill(p.in, cnt, own);
        fill(p.out, cnt * n, [](int) { return -1LL; });
        break;
      case 4:
        fill(p.in, cnt * n, own);
        fill(p.out, cnt * n, [](int) { return -1LL; });
        break;
      default:
        fill(p.in, cnt * n, [&](int j) { return contribution(round_, ci, k.root, j); });
        fill(p.out, cnt, [](int) { return -1LL; });
    }
    pending_.push_back(std::move(p));
    Pending& q = pending_.back();
    Request* r = nullptr;
    if (!k.blocking) {
      requests_.emplace_back();
      r = &requests_.back();
    }
    long long *in = q.in.data(), *out = q.out.data();
    MPI_Datatype t = MPI_LONG_LONG;
    int rc;
    switch (k.kind) {
      case 0:
        rc = r ? rangecomm::Ibcast(out, cnt, t, k.root, c, r)
               : rangecomm::Bcast(out, cnt, t, k.root, c);
        break;
      case 1:
        rc = r ? rangecomm::Iallreduce(in, out, cnt, t, MPI_SUM, c, r)
               : rangecomm::Allreduce(in, out, cnt, t, MPI_SUM, c);
        break;
      case 2:
        rc = r ? rangecomm::Ireduce(in, out, cnt, t, MPI_SUM, k.root, c, r)
               : rangecomm::Reduce(in, out, cnt, t, MPI_SUM, k.root, c);
        break;
      case 3:
        rc = r ? rangecomm::Iallgather(in, cnt, t, out, cnt, t, c, r)
               : rangecomm::Allgather(in, cnt, t, out, cnt, t, c);
        break;
      case 4:
        rc = r ? rangecomm::Ialltoall(in, cnt, t, out, cnt, t, c, r)
               : rangecomm::Alltoall(in, cnt, t, out, cnt, t, c);
        break;
      case 5:
        rc = r ? rangecomm::Iscan(in, out, cnt, t, MPI_SUM, c, r)
               : rangecomm::Scan(in, out, cnt, t, MPI_SUM, c);
        break;
      case 6:
        rc = r ? rangecomm::Iexscan(in, out, cnt, t, MPI_SUM, c, r)
               : rangecomm::Exscan(in, out, cnt, t, MPI_SUM, c);
        break;
      case 7:
        rc = r ? rangecomm::Igather(in, cnt, t, out, cnt, t, k.root, c, r)
               : rangecomm::Gather(in, cnt, t, out, cnt, t, k.root, c);
        break;
      default:
        rc = r ? rangecomm::Iscatter(in, cnt, t, out, cnt, t, k.root, c, r)
               : rangecomm::Scatter(in, cnt, t, out, cnt, t, k.root, c);
    }
    if (rc != MPI_SUCCESS)
      fail_->add("round %d: collective %d (kind %d) failed (%d)", round_, ci, k.kind, rc);
    if (!r) {
      check_coll(q);
      pending_.pop_back();
    }
  }

  // Completes every request in one of four random ways, checking each as it completes.
  void complete_all(std::mt19937_64& rng) {
    std::vector<Pending*> of(requests_.size());
    // Pending entries of blocking operations were removed; requests_ holds the others in order.
    size_t r = 0;
    for (auto& p : pending_) of[r++] = &p;
    int n = static_cast<int>(requests_.size());
    std::vector<MPI_Status> st(static_cast<size_t>(n));
    switch (rng() % 4) {
      case 0:
        if (int rc = rangecomm::Waitall(n, requests_.data(), st.data()))
          fail_->add("round %d: Waitall %d", round_, rc);
        for (int i = 0; i < n; ++i) finish(*of[i], st[i]);
        break;
      case 1: {
        std::vector<int> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        for (int i : order) {
          rangecomm::Wait(&requests_[i], &st[i]);
          finish(*of[i], st[i]);
        }
        break;
      }
      case 2:
        for (int left = n; left > 0; --left) {
          int index = MPI_UNDEFINED;
          MPI_Status s;
          rangecomm::Waitany(n, requests_.data(), &index, &s);
          if (index == MPI_UNDEFINED) break;
          finish(*of[index], s);
        }
        break;
      default: {
        std::vector<int> idx(static_cast<size_t>(n));
        for (int left = n; left > 0;) {
          int outcount = 0;
          rangecomm::Testsome(n, requests_.data(), &outcount, idx.data(), st.data());
          if (outcount == MPI_UNDEFINED) break;
          for (int j = 0; j < outcount; ++j) finish(*of[idx[j]], st[j]);
          left -= outcount;
        }
      }
    }
  }

  void finish(Pending& p, const MPI_Status& st) {
    if (p.kind == Pending::recv) check_recv(p, st);
    if (p.kind == Pending::coll) check_coll(p);
  }

  void check_recv(const Pending& p, const MPI_Status& st) {
    const Msg& planned = rd_.msgs[p.index];
    int c = planned.comm;
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    Header h{};
    if (p.src_arg != MPI_ANY_SOURCE && p.tag_arg != MPI_ANY_TAG) {
      // Exact: MPI's order says which message this is.
      if (st.MPI_SOURCE != planned.src || st.MPI_TAG != planned.tag || count != planned.len)
        return fail_->add(
            "round %d comm %d: exact receive got source %d tag %d count %d, want %d %d %d", round_,
            c, st.MPI_SOURCE, st.MPI_TAG, count, planned.src, planned.tag, planned.len);
      if (count == 0)
        return note({c, planned.src, planned.tag, static_cast<int>(planned.seq)}, p.post);
    }
    if (count < kHeaderBytes)
      return fail_->add("round %d comm %d: %d bytes, no header", round_, c, count);
    std::memcpy(&h, p.buf.data(), sizeof h);
    int src_rank = comms_[c].rank_from_root(static_cast<int>(h.src_world));
    bool ok = static_cast<int>(h.comm) == c && static_cast<int>(h.len) == count &&
              src_rank == st.MPI_SOURCE && static_cast<int>(h.tag) == st.MPI_TAG &&
              (p.src_arg == MPI_ANY_SOURCE || p.src_arg == st.MPI_SOURCE) &&
              (p.tag_arg == MPI_ANY_TAG || p.tag_arg == st.MPI_TAG) &&
              h.checksum ==
                  checksum(p.buf.data() + kHeaderBytes, static_cast<size_t>(count) - kHeaderBytes);
    if (!ok)
      return fail_->add(
          "round %d comm %d: message (comm %u, from world %u, tag %u, seq %u, %u bytes) "
          "received with source %d tag %d count %d by a receive for (%d, %d)",
          round_, c, h.comm, h.src_world, h.tag, h.seq, h.len, st.MPI_SOURCE, st.MPI_TAG, count,
          p.src_arg, p.tag_arg);
    note({c, st.MPI_SOURCE, st.MPI_TAG, static_cast<int>(h.seq)}, p.post);
  }

  void note(std::array<int, 4> id, int post) {
    if (!got_.insert(id).second)
      fail_->add("round %d comm %d: message from %d tag %d seq %d received twice", round_, id[0],
                 id[1], id[2], id[3]);
    order_[{id[0], id[1], id[2]}].push_back({post, id[3]});
    ++(*received_)[plan_[id[0]].members[id[1]]];
  }

  void check_coll(const Pending& p) {
    const Coll& k = rd_.colls[p.index];
    int me = rank_in(k.comm), n = comms_[k.comm].size(), cnt = k.count, ci = p.index;
    auto sum_upto = [&](int last, int j) {
      long long s = 0;
      for (int r = 0; r <= last; ++r) s += contribution(round_, ci, r, j);
      return s;
    };
    bool ok = true;
    for (int j = 0; j < cnt && ok; ++j) {
      switch (k.kind) {
        case 0:
          ok = p.out[j] == contribution(round_, ci, k.root, j);
          break;
        case 1:
          ok = p.out[j] == sum_upto(n - 1, j);
          break;
        case 2:
          ok = me != k.root || p.out[j] == sum_upto(n - 1, j);
          break;
        case 5:
          ok = p.out[j] == sum_upto(me, j);
          break;
        case 6:
          ok = me == 0 || p.out[j] == sum_upto(me - 1, j);
          break;
        case 8:
          ok = p.out[j] == contribution(round_, ci, k.root, me * cnt + j);
          break;
        default:
          for (int q = 0; q < n && ok; ++q) {
            long long want = k.kind == 4 ? contribution(round_, ci, q, me * cnt + j)
                                         : contribution(round_, ci, q, j);
            ok = (k.kind == 7 && me != k.root) || p.out[q * cnt + j] == want;
          }
      }
    }
    if (!ok)
      fail_->add(
          "round %d: collective %d (kind %d, comm %d, root %d, count %d) gave a wrong result",
          round_, ci, k.kind, k.comm, k.root, cnt);
  }

  // Exactly the planned messages arrived, and each (comm, source, tag) stream in order.
  void check_round() {
    std::set<std::array<int, 4>> want;
    for (const RecvGroup& g : rd_.groups)
      if (mine(g))
        for (int i : g.msgs) {
          const Msg& m = rd_.msgs[i];
          want.insert({m.comm, m.src, m.tag, static_cast<int>(m.seq)});
        }
    if (want != got_)
      fail_->add("round %d: %zu messages planned for this process, %zu received (or others)",
                 round_, want.size(), got_.size());
    for (auto& [stream, seen] : order_) {
      std::sort(seen.begin(), seen.end());
      for (size_t i = 1; i < seen.size(); ++i)
        if (seen[i].second <= seen[i - 1].second)
          fail_->add("round %d comm %d: from %d tag %d, seq %d was matched after seq %d", round_,
                     stream[0], stream[1], stream[2], seen[i].second, seen[i - 1].second);
    }
  }

  int round_;
  const Round& rd_;
  const std::vector<CommPlan>& plan_;
  const std::vector<Comm>& comms_;
  Failure* fail_;
  std::vector<long long>*sent_, *received_;
  std::deque<Pending> pending_;    // stable addresses: buffers stay put while MPI uses them
  std::vector<Request> requests_;  // one per pending nonblocking operation, same order
  int posted_ = 0;
  std::set<std::array<int, 4>> got_;
  std::map<std::array<int, 3>, std::vector<std::pair<int, int>>> order_;  // (post, seq)
};

long long env_or(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

}  // namespace

TEST_CASE("torture: random communicators, traffic and collectives, every message accounted") {
  const std::uint64_t seed = static_cast<std::uint64_t>(env_or("RANGECOMM_TORTURE_SEED", 20261122));
  const int rounds = static_cast<int>(env_or("RANGECOMM_TORTURE_ROUNDS", 12));
  int p = mpitest::world_size(), me = mpitest::world_rank();
  Planner planner(seed, p);
  std::vector<CommPlan> plan = planner.comms(12);
  // Make the communicators in plan order; one that clashes with a live one (the documented
  // error) or whose parent is unusable is dropped everywhere before the next is made.
  std::vector<Comm> comms(plan.size());
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &comms[0]) == MPI_SUCCESS);
  int dropped = 0;
  for (size_t i = 1; i < plan.size(); ++i) {
    const CommPlan& c = plan[i];
    bool member = std::find(c.members.begin(), c.members.end(), me) != c.members.end();
    int rc = MPI_SUCCESS;
    if (member && comms[c.parent].is_null())
      rc = MPI_ERR_COMM;
    else if (member && c.general)
      rc = rangecomm::Comm_create_group(comms[c.parent], c.group.data(),
                                        static_cast<int>(c.group.size()), static_cast<int>(i),
                                        &comms[i]);
    else if (member)
      rc = rangecomm::Split_Comm(comms[c.parent], c.first, c.last, c.stride, &comms[i]);
    if (!mpitest::all_ranks(rc == MPI_SUCCESS)) {
      comms[i] = Comm();
      ++dropped;
    }
  }
  // Traffic only on communicators every member has (a dropped one is null on all members).
  std::vector<int> alive(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) alive[i] = mpitest::any_rank(!comms[i].is_null());
  Failure fail;
  std::vector<long long> sent(p, 0), received(p, 0);
  std::map<std::array<int, 4>, std::uint32_t> seq;
  std::mt19937_64 local_rng(seed * 31 + static_cast<std::uint64_t>(me));
  long long messages = 0, collectives = 0;
  for (int r = 0; r < rounds && fail.text.empty(); ++r) {
    Round rd = planner.round(plan, 8 * p, 1 + p / 2, &seq);
    Round kept;
    std::vector<int> renumber(rd.msgs.size(), -1);
    for (size_t i = 0; i < rd.msgs.size(); ++i)
      if (alive[rd.msgs[i].comm]) {
        renumber[i] = static_cast<int>(kept.msgs.size());
        kept.msgs.push_back(rd.msgs[i]);
      }
    for (RecvGroup g : rd.groups)
      if (alive[g.comm]) {
        for (int& i : g.msgs) i = renumber[i];
        kept.groups.push_back(g);
      }
    for (const Coll& k : rd.colls)
      if (alive[k.comm]) kept.colls.push_back(k);
    messages += static_cast<long long>(kept.msgs.size());
    collectives += static_cast<long long>(kept.colls.size());
    RoundRun(r, kept, plan, comms, &fail, &sent, &received).run(local_rng);
    if (!fail.text.empty())
      std::fprintf(stderr, "torture: seed %llu, %d ranks, round %d failed on rank %d:\n%s",
                   static_cast<unsigned long long>(seed), p, r, me, fail.text.c_str());
    CHECK(rangecomm::Barrier(comms[0]) == MPI_SUCCESS);
    if (mpitest::any_rank(!fail.text.empty())) break;
  }
  CHECK(fail.text.empty());
  // Every message sent was received exactly once: the senders' counts per destination against
  // the receivers' counts per source.
  std::vector<long long> sent_to_me(p, 0);
  MPI_Alltoall(sent.data(), 1, MPI_LONG_LONG, sent_to_me.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
  CHECK(sent_to_me == received);
  if (me == 0)
    std::printf(
        "torture: seed %llu, %d ranks, %zu communicators (%d dropped by clashes), %d rounds, "
        "%lld messages, %lld collectives\n",
        static_cast<unsigned long long>(seed), p, plan.size(), dropped, rounds, messages,
        collectives);
}
