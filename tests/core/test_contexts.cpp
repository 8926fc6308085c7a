// Contexts: every creation that is legal for MPI communicators works, and the communicators it
// makes stay isolated (contract 3 and 5 of /work/shared/guide/semantics.md): live
// copies of one range (two, fifty, two thousand), the same members reached through different
// parents (ranges, strided ranges, general groups, groups that are ranges), and a seeded
// torture of creations and frees. Every creation must return MPI_SUCCESS and give the planned
// members; then one user tag carries traffic on every live communicator at once, sent in one
// order of communicators and received in another, with specific, MPI_ANY_SOURCE, MPI_ANY_TAG
// and probed receives, interleaved with one Iallreduce per communicator. Every message must
// arrive on its own communicator from its own sender, once, and every reduction must see
// exactly its own members.
//
// No hang by construction: every process computes the same plan (every rank knows every
// communicator's members), the ranks agree on which creations succeeded everywhere before any
// traffic (a failed creation is reported and left out), every receive is posted (or probed for)
// before anything is waited for, and a creation or wait that does not complete within
// kWaitLimit seconds is reported as lost and cancelled, so a broken library fails the case
// instead of hanging it.
//
// RANGECOMM_CONTEXTS_SEED and RANGECOMM_CONTEXTS_STEPS change the torture's seed and length.
#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <rangecomm/rangecomm.hpp>
#include <string>
#include <vector>

#include "mpi_test.hpp"

using rangecomm::Comm;
using rangecomm::Request;

namespace {

constexpr int kTag = 7;              // the one user tag of all point-to-point traffic here
constexpr double kWaitLimit = 10.0;  // seconds before an unfinished wait counts as lost

// Failure lines of one process, kept short (the first few and a count).
struct Log {
  std::string text;
  int count = 0;
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  bool empty() const { return count == 0; }
  void clear() {
    text.clear();
    count = 0;
  }
};
void Log::add(const char* fmt, ...) {
  if (++count > 12) {
    if (count == 13) text += "... (more)\n";
    return;
  }
  char line[600];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  text += line;
  text += '\n';
}

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (rangecomm::Error_string(code, text, &len) != MPI_SUCCESS) return "(no error string)";
  return std::string(text, static_cast<size_t>(len));
}

// Reports a process's failures as one CHECK (with the text shown) without leaving the test case.
#define CHECK_LOG(log)       \
  do {                       \
    INFO((log).text);        \
    CHECK((log).count == 0); \
  } while (0)

// Seeded mixing for choices that every rank must make alike.
std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

// One communicator of a scene. Every rank holds every entry; `comm` is null on non-members.
struct Entry {
  std::string what;
  std::vector<int> members;  // world ranks in rank order
  Comm comm;
  int parent = -1;     // entry it was made from (-1: Create_Comm)
  bool group = false;  // made by Icomm_create_group (else Split_Comm / Create_Comm)
  int first = 0, last = 0, stride = 1;  // Split_Comm's arguments (parent ranks)
  std::vector<int> ranks;               // Icomm_create_group's rank list (parent ranks)
  bool pending = false;                 // created, not yet agreed on
  bool live = false;                    // created on every member and not freed

  int index_of(int world_rank) const {
    auto it = std::find(members.begin(), members.end(), world_rank);
    return it == members.end() ? -1 : static_cast<int>(it - members.begin());
  }
  int my_rank() const { return index_of(mpitest::world_rank()); }
  bool mine() const { return my_rank() >= 0; }
  int size() const { return static_cast<int>(members.size()); }
};

// The communicators of a test case, their creation and their agreement.
class Scene {
 public:
  std::vector<Entry> entries;
  Log creation;            // creation failures of this process
  bool timed_out = false;  // a creation never completed here

  Scene() {
    Entry e;
    e.what = "world";
    e.members.resize(static_cast<size_t>(mpitest::world_size()));
    std::iota(e.members.begin(), e.members.end(), 0);
    int rc = rangecomm::Create_Comm(MPI_COMM_WORLD, &e.comm);
    finish(&e, rc, "Create_Comm");
    add(std::move(e));
  }

  const Entry& operator[](int i) const { return entries[static_cast<size_t>(i)]; }
  Entry& operator[](int i) { return entries[static_cast<size_t>(i)]; }

  // Split_Comm(parent, first, last, stride) on the parent's members. Returns the entry index.
  int split(int parent, int first, int last, int stride, const std::string& what) {
    Entry e;
    e.what = what;
    e.parent = parent;
    e.first = first;
    e.last = last;
    e.stride = stride;
    const Entry& p = (*this)[parent];
    for (int r = first; r <= last; r += stride)
      e.members.push_back(p.members[static_cast<size_t>(r)]);
    if (!parent_made(p, &e)) return add(std::move(e));
    int rc = MPI_SUCCESS;
    if (p.mine()) rc = rangecomm::Split_Comm(p.comm, first, last, stride, &e.comm);
    finish(&e, rc, "Split_Comm");
    return add(std::move(e));
  }

  // Icomm_create_group(parent, ranks, tag) called by the group's members only, then waited for
  // (with a time limit, so that a creation that never completes is a failure, not a hang). The
  // parent must have been agreed on, so that all members of the group call it or none.
  int group(int parent, const std::vector<int>& ranks, int tag, const std::string& what) {
    REQUIRE_FALSE((*this)[parent].pending);  // alike on every rank
    Entry e;
    e.what = what;
    e.parent = parent;
    e.group = true;
    e.ranks = ranks;
    const Entry& p = (*this)[parent];
    for (int r : ranks) e.members.push_back(p.members[static_cast<size_t>(r)]);
    if (!parent_made(p, &e)) return add(std::move(e));
    int rc = MPI_SUCCESS;
    if (e.mine()) {
      auto out = std::make_unique<Comm>();
      Request req;
      rc = rangecomm::Icomm_create_group(p.comm, ranks.data(), static_cast<int>(ranks.size()), tag,
                                         out.get(), &req);
      int flag = 0;
      double deadline = MPI_Wtime() + kWaitLimit;
      while (rc == MPI_SUCCESS && !flag && MPI_Wtime() < deadline)
        rc = rangecomm::Test(&req, &flag, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS && !flag) {
        creation.add("%s: Icomm_create_group did not complete within %g s", what.c_str(),
                     kWaitLimit);
        rangecomm::Request_free(&req);
        out.release();  // the library may still write it
        rc = MPI_ERR_PENDING;
        timed_out = true;
      } else if (rc == MPI_SUCCESS) {
        e.comm = *out;
      }
    }
    finish(&e, rc, "Icomm_create_group");
    return add(std::move(e));
  }

  // Collective over the world: the pending creations that succeeded on every rank become live,
  // the others are freed where they exist. Returns how many failed somewhere. A creation that
  // never completed ends the test case (on every rank alike): it would cost kWaitLimit each time.
  int agree() {
    {
      INFO(creation.text);
      REQUIRE_FALSE(mpitest::any_rank(timed_out));
    }
    std::vector<int> ok, which;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].pending) {
        which.push_back(static_cast<int>(i));
        ok.push_back(entries[i].live ? 1 : 0);  // finish() put the local verdict in `live`
      }
    std::vector<int> all(ok.size());
    MPI_Allreduce(ok.data(), all.data(), static_cast<int>(ok.size()), MPI_INT, MPI_LAND,
                  MPI_COMM_WORLD);
    int failed = 0;
    for (size_t k = 0; k < which.size(); ++k) {
      Entry& e = (*this)[which[k]];
      e.pending = false;
      e.live = all[k] != 0;
      if (!e.live) {
        ++failed;
        if (!e.comm.is_null()) rangecomm::Comm_free(&e.comm);
        e.comm = Comm();
      }
    }
    return failed;
  }

  void free(int i) {
    Entry& e = (*this)[i];
    if (!e.comm.is_null()) {
      int rc = rangecomm::Comm_free(&e.comm);
      if (rc != MPI_SUCCESS)
        creation.add("%s: Comm_free failed: %s", e.what.c_str(), error_text(rc).c_str());
      if (!e.comm.is_null()) creation.add("%s: Comm_free left the handle set", e.what.c_str());
    }
    e.live = false;
  }

  std::vector<int> live() const {
    std::vector<int> out;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].live) out.push_back(static_cast<int>(i));
    return out;
  }

 private:
  // A creation whose parent failed here is not attempted (it fails too, without a second
  // message that only says the parent is null).
  bool parent_made(const Entry& p, Entry* e) {
    if (!p.mine() || p.live) return true;
    if (e->mine())
      creation.add("%s: not attempted, its parent (%s) was not created", e->what.c_str(),
                   p.what.c_str());
    e->live = false;
    return false;
  }

  int add(Entry e) {
    e.pending = true;
    entries.push_back(std::move(e));
    return static_cast<int>(entries.size()) - 1;
  }

  // The local verdict on a creation: it returned MPI_SUCCESS and shows the planned members.
  void finish(Entry* e, int rc, const char* call) {
    bool ok = true;
    int me = e->my_rank();
    if (rc != MPI_SUCCESS) {
      creation.add("%s: %s returned %d: %s", e->what.c_str(), call, rc, error_text(rc).c_str());
      ok = false;
    } else if (me < 0) {
      if (!e->comm.is_null()) {
        creation.add("%s: a non-member got a communicator", e->what.c_str());
        ok = false;
      }
    } else if (e->comm.is_null()) {
      creation.add("%s: a member got the null communicator", e->what.c_str());
      ok = false;
    } else {
      if (e->comm.rank() != me || e->comm.size() != e->size()) {
        creation.add("%s: rank %d of %d, expected %d of %d", e->what.c_str(), e->comm.rank(),
                     e->comm.size(), me, e->size());
        ok = false;
      }
      for (int r = 0; ok && r < e->size(); ++r)
        if (e->comm.rank_in_root(r) != e->members[static_cast<size_t>(r)]) {
          creation.add("%s: rank %d is world %d, expected %d", e->what.c_str(), r,
                       e->comm.rank_in_root(r), e->members[static_cast<size_t>(r)]);
          ok = false;
        }
    }
    e->live = ok;  // the local verdict until agree()
  }
};

// What every message carries.
struct Payload {
  int comm_id, sender, receiver, seq, check;
};
constexpr int kInts = 5;
static_assert(sizeof(Payload) == kInts * sizeof(int), "payload layout");
Payload make_payload(int comm_id, int sender, int receiver, int seq) {
  return {comm_id, sender, receiver, seq, comm_id * 7919 + sender * 131 + receiver * 31 + seq};
}
bool intact(const Payload& p) {
  return p.check == p.comm_id * 7919 + p.sender * 131 + p.receiver * 31 + p.seq;
}

// How one process receives its messages of one communicator in one round.
enum class Mode { exact, any_source, any_tag, any_both, mixed, probe, count };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::exact:
      return "exact";
    case Mode::any_source:
      return "ANY_SOURCE";
    case Mode::any_tag:
      return "ANY_TAG";
    case Mode::any_both:
      return "ANY_SOURCE+ANY_TAG";
    case Mode::mixed:
      return "specific then ANY_SOURCE";
    case Mode::probe:
      return "Iprobe(ANY,ANY)+Recv";
    default:
      return "?";
  }
}

// One round of traffic on the communicators `ids` (live on every rank), collective over the
// world: every member of each sends one message with kTag to every member (itself included),
// one Iallreduce per communicator is started between the sends, then everything is received
// and checked. Failures go to `log`; returns whether this process saw none.
bool exchange(const Scene& s, const std::vector<int>& ids, int round, std::uint64_t seed,
              Log* log) {
  const int me_world = mpitest::world_rank();
  std::mt19937_64 shared(mix(seed, static_cast<std::uint64_t>(round)));  // alike on all ranks
  std::vector<int> send_order = ids, recv_order = ids;
  std::shuffle(send_order.begin(), send_order.end(), shared);
  std::shuffle(recv_order.begin(), recv_order.end(), shared);
  if (recv_order == send_order) std::reverse(recv_order.begin(), recv_order.end());

  // Buffers, allocated up front (Irecv buffers must not move) and leaked if a wait times out
  // (a request that never completed may still write into them).
  struct Slot {
    int id, src_arg, tag_arg;
    Mode mode;
  };
  struct Buffers {
    std::vector<Payload> in, out;
    std::vector<std::array<int, 3>> mine, sum;
  };
  size_t n_recv = 0, n_send = 0, n_coll = 0;
  for (int id : ids)
    if (s[id].mine()) {
      n_recv += static_cast<size_t>(s[id].size());
      n_send += static_cast<size_t>(s[id].size());
      ++n_coll;
    }
  auto buf = std::make_unique<Buffers>();
  std::vector<Payload>& in = buf->in;
  std::vector<Payload>& out = buf->out;
  in.assign(n_recv, Payload{-1, -1, -1, -1, -1});
  out.reserve(n_send);
  buf->mine.reserve(n_coll);
  buf->sum.reserve(n_coll);
  std::vector<Slot> slots;
  slots.reserve(n_recv);
  std::vector<Request> reqs;
  reqs.reserve(n_recv + n_send + n_coll);
  std::vector<int> coll_of(n_recv + n_send + n_coll, -1);  // request index -> Allreduce slot
  std::vector<int> coll_id;                                // Allreduce slot -> communicator
  struct Probed {
    int id, left;
  };
  std::vector<Probed> probed;
  std::vector<std::vector<int>> from(s.entries.size());  // per communicator: messages per sender

  bool ok = true;
  auto fail = [&](const char* what, int rc) {
    log->add("round %d: %s failed: %s", round, what, error_text(rc).c_str());
    ok = false;
  };

  // 1. Receives, communicators in recv_order; within one, the senders in a rotated order.
  for (int id : recv_order) {
    const Entry& e = s[id];
    if (!e.mine()) continue;
    int n = e.size(), r = e.my_rank();
    from[static_cast<size_t>(id)].assign(static_cast<size_t>(n), 0);
    auto mode = static_cast<Mode>(mix(mix(seed, static_cast<std::uint64_t>(round) * 1000003 + id),
                                      static_cast<std::uint64_t>(me_world)) %
                                  static_cast<std::uint64_t>(Mode::count));
    if (mode == Mode::probe) {
      probed.push_back({id, n});
      continue;
    }
    for (int k = 0; k < n; ++k) {
      int src = (r + round + k) % n;
      int src_arg = src, tag_arg = kTag;
      switch (mode) {
        case Mode::any_source:
          src_arg = MPI_ANY_SOURCE;
          break;
        case Mode::any_tag:
          tag_arg = MPI_ANY_TAG;
          break;
        case Mode::any_both:
          src_arg = MPI_ANY_SOURCE;
          tag_arg = MPI_ANY_TAG;
          break;
        case Mode::mixed:
          // Specific receives for the first half, posted first, so that none of their messages
          // can go to the wildcards posted after them (the earliest posted match wins).
          if (k >= n / 2) {
            src_arg = MPI_ANY_SOURCE;
            if (k % 2) tag_arg = MPI_ANY_TAG;
          } else if (k % 2) {
            tag_arg = MPI_ANY_TAG;
          }
          break;
        default:
          break;
      }
      slots.push_back({id, src_arg, tag_arg, mode});
      reqs.emplace_back();
      int rc = rangecomm::Irecv(&in[slots.size() - 1], kInts, MPI_INT, src_arg, tag_arg, e.comm,
                                &reqs.back());
      if (rc != MPI_SUCCESS) fail("Irecv", rc);
    }
  }

  // 2. Sends in send_order, each communicator's Iallreduce started right after its sends.
  for (int id : send_order) {
    const Entry& e = s[id];
    if (!e.mine()) continue;
    int n = e.size(), r = e.my_rank();
    for (int k = 0; k < n; ++k) {
      int dst = (r + 1 + k) % n;
      out.push_back(make_payload(id, r, dst, round));
      reqs.emplace_back();
      int rc = rangecomm::Isend(&out.back(), kInts, MPI_INT, dst, kTag, e.comm, &reqs.back());
      if (rc != MPI_SUCCESS) fail("Isend", rc);
    }
    buf->mine.push_back({id, me_world, 1});
    buf->sum.push_back({-1, -1, -1});
    coll_of[reqs.size()] = static_cast<int>(coll_id.size());
    coll_id.push_back(id);
    reqs.emplace_back();
    int rc = rangecomm::Iallreduce(buf->mine.back().data(), buf->sum.back().data(), 3, MPI_INT,
                                   MPI_SUM, e.comm, &reqs.back());
    if (rc != MPI_SUCCESS) fail("Iallreduce", rc);
  }

  // 3. Completion: Testsome over everything, Iprobe+Recv for the probing communicators.
  auto take = [&](int id, const Payload& p, const MPI_Status& st, int src_arg, const char* how) {
    const Entry& e = s[id];
    int n = e.size();
    bool good = intact(p) && p.comm_id == id && p.receiver == e.my_rank() && p.seq == round &&
                st.MPI_SOURCE == p.sender && st.MPI_TAG == kTag &&
                (src_arg == MPI_ANY_SOURCE || src_arg == p.sender) && p.sender >= 0 && p.sender < n;
    if (!good) {
      const char* other = p.comm_id >= 0 && p.comm_id < static_cast<int>(s.entries.size())
                              ? s[p.comm_id].what.c_str()
                              : "?";
      log->add(
          "round %d: on %d (%s) by %s (source arg %d): got {comm %d (%s), sender %d, receiver "
          "%d, seq %d, %s} with status source %d tag %d",
          round, id, e.what.c_str(), how, src_arg, p.comm_id, other, p.sender, p.receiver, p.seq,
          intact(p) ? "intact" : "corrupt", st.MPI_SOURCE, st.MPI_TAG);
      ok = false;
    }
    if (p.comm_id == id && p.sender >= 0 && p.sender < n)
      ++from[static_cast<size_t>(id)][static_cast<size_t>(p.sender)];
  };

  double deadline = MPI_Wtime() + kWaitLimit;
  size_t open = reqs.size();
  int probes_left = 0;
  for (const Probed& pr : probed) probes_left += pr.left;
  std::vector<int> indices(reqs.size());
  std::vector<MPI_Status> statuses(reqs.size());
  while ((open > 0 || probes_left > 0) && MPI_Wtime() < deadline) {
    if (open > 0) {
      int outcount = 0;
      int rc = rangecomm::Testsome(static_cast<int>(reqs.size()), reqs.data(), &outcount,
                                   indices.data(), statuses.data());
      if (rc != MPI_SUCCESS) {
        fail("Testsome", rc);
        break;
      }
      if (outcount == MPI_UNDEFINED) outcount = 0;
      for (int k = 0; k < outcount; ++k) {
        size_t i = static_cast<size_t>(indices[static_cast<size_t>(k)]);
        --open;
        if (i < slots.size()) {
          take(slots[i].id, in[i], statuses[static_cast<size_t>(k)], slots[i].src_arg,
               mode_name(slots[i].mode));
        } else if (coll_of[i] >= 0) {
          int c = coll_of[i], id = coll_id[static_cast<size_t>(c)];
          const Entry& e = s[id];
          const auto& sum = buf->sum[static_cast<size_t>(c)];
          int n = e.size(), expected = std::accumulate(e.members.begin(), e.members.end(), 0);
          if (sum[0] != id * n || sum[1] != expected || sum[2] != n) {
            log->add("round %d: Allreduce on %d (%s) gave {%d,%d,%d}, expected {%d,%d,%d}", round,
                     id, e.what.c_str(), sum[0], sum[1], sum[2], id * n, expected, n);
            ok = false;
          }
        }
      }
    }
    for (Probed& pr : probed) {
      if (pr.left == 0) continue;
      const Entry& e = s[pr.id];
      int flag = 0;
      MPI_Status st;
      int rc = rangecomm::Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, e.comm, &flag, &st);
      if (rc != MPI_SUCCESS) {
        fail("Iprobe", rc);
        pr.left = 0;
        continue;
      }
      if (!flag) continue;
      Payload p{-1, -1, -1, -1, -1};
      MPI_Status got;
      rc = rangecomm::Recv(&p, kInts, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, e.comm, &got);
      if (rc != MPI_SUCCESS) fail("Recv after Iprobe", rc);
      if (got.MPI_SOURCE != st.MPI_SOURCE) {
        log->add("round %d: on %d (%s) Iprobe saw source %d, Recv got %d", round, pr.id,
                 e.what.c_str(), st.MPI_SOURCE, got.MPI_SOURCE);
        ok = false;
      }
      take(pr.id, p, got, MPI_ANY_SOURCE, mode_name(Mode::probe));
      --pr.left;
      --probes_left;
    }
  }
  if (open > 0 || probes_left > 0) {
    std::string where;
    for (size_t i = 0; i < slots.size(); ++i)
      if (!reqs[i].is_null() && where.size() < 300)
        where += " " + std::to_string(slots[i].id) + "(" + s[slots[i].id].what + ", " +
                 mode_name(slots[i].mode) + ")";
    for (const Probed& pr : probed)
      if (pr.left > 0) where += " probe:" + std::to_string(pr.id) + "(" + s[pr.id].what + ")";
    for (size_t i = slots.size(); i < reqs.size(); ++i)
      if (!reqs[i].is_null() && where.size() < 400)
        where += coll_of[i] >= 0
                     ? " Iallreduce:" + std::to_string(coll_id[static_cast<size_t>(coll_of[i])])
                     : std::string(" Isend");
    log->add("round %d: %zu requests and %d probed messages not complete after %g s; open:%s",
             round, open, probes_left, kWaitLimit, where.c_str());
    ok = false;
    // Cancel the receives and complete them (briefly), free whatever is left.
    for (size_t i = 0; i < slots.size(); ++i)
      if (!reqs[i].is_null()) rangecomm::Cancel(&reqs[i]);
    double until = MPI_Wtime() + 1.0;
    for (size_t i = 0; i < slots.size(); ++i)
      for (int flag = 0; !reqs[i].is_null() && !flag && MPI_Wtime() < until;)
        if (rangecomm::Test(&reqs[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
    for (Request& r : reqs)
      if (!r.is_null()) rangecomm::Request_free(&r);
    buf.release();  // an unfinished operation may still write into it
  }

  // 4. Each member's message arrived exactly once on every communicator.
  for (int id : ids) {
    const Entry& e = s[id];
    if (!e.mine()) continue;
    for (int q = 0; q < e.size(); ++q) {
      int c = from[static_cast<size_t>(id)][static_cast<size_t>(q)];
      if (c != 1) {
        log->add("round %d: on %d (%s, %d members) %d messages from rank %d, expected 1", round, id,
                 e.what.c_str(), e.size(), c, q);
        ok = false;
      }
    }
  }
  return ok;
}

// Traffic on every live communicator of the scene; stops the test case (on every rank alike) if
// anything went wrong anywhere.
void traffic(const Scene& s, int round, std::uint64_t seed) {
  Log log;
  exchange(s, s.live(), round, seed, &log);
  CHECK_LOG(log);
  REQUIRE(mpitest::all_ranks(log.empty()));
}

std::vector<int> iota_vec(int n, int from = 0) {
  std::vector<int> v(static_cast<size_t>(std::max(n, 0)));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

}  // namespace

TEST_CASE("two live copies of one range, of a sub-range, of a strided range and of size-1 ranges") {
  Scene s;
  int p = mpitest::world_size();
  int sub_first = std::min(1, p - 1);
  for (int copy = 1; copy <= 2; ++copy) {
    std::string c = " copy " + std::to_string(copy);
    s.split(0, 0, p - 1, 1, "world 0..p-1" + c);
    s.split(0, sub_first, p - 1, 1, "world 1..p-1" + c);
    s.split(0, 0, p - 1, 2, "world evens" + c);
    for (int r = 0; r < p; ++r)
      s.split(0, r, r, 1, "world " + std::to_string(r) + ".." + std::to_string(r) + c);
  }
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 1, 101);
  // A third copy of each while both are alive, and traffic again.
  s.creation.clear();
  s.split(0, 0, p - 1, 1, "world 0..p-1 copy 3");
  s.split(0, sub_first, p - 1, 1, "world 1..p-1 copy 3");
  s.split(0, 0, p - 1, 2, "world evens copy 3");
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 2, 102);
}

TEST_CASE("fifty live copies of the world range and of a sub-range") {
  Scene s;
  int p = mpitest::world_size();
  int sub_first = std::min(1, p - 1);
  for (int copy = 1; copy <= 50; ++copy) {
    s.split(0, 0, p - 1, 1, "world 0..p-1 copy " + std::to_string(copy));
    s.split(0, sub_first, p - 1, 1, "world 1..p-1 copy " + std::to_string(copy));
  }
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 1, 201);
  // Free every other copy and make fifty more: copies made after frees are fine too.
  s.creation.clear();
  auto live = s.live();
  for (size_t k = 1; k < live.size(); k += 2) s.free(live[k]);
  for (int copy = 51; copy <= 100; ++copy)
    s.split(0, 0, p - 1, 1, "world 0..p-1 copy " + std::to_string(copy));
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 2, 202);
}

TEST_CASE("the same members reached through different parents: ranges") {
  int p = mpitest::world_size();
  if (p < 3) return;  // needs 0..p-2 to have two members: with one, nothing can be confused
  Scene s;
  int A = s.split(0, 0, p - 1, 1, "A = world 0..p-1");
  int N = s.split(A, 0, p - 2, 1, "N = A's 0..p-2");
  int L = s.split(0, 0, p - 2, 1, "L = world 0..p-2");
  int M = s.split(L, 0, p - 2, 1, "M = L's 0..p-2 (all of L)");
  int B = s.split(0, 0, p - 1, 1, "B = world 0..p-1 (a copy of A)");
  s.split(B, 0, p - 2, 1, "B's 0..p-2");
  // One level further: the same members at depth 3 through three chains.
  s.split(N, 0, p - 2, 1, "all of N");
  s.split(M, 0, p - 2, 1, "all of M");
  int W2 = s.split(A, 0, p - 1, 1, "all of A");
  s.split(W2, 0, p - 2, 1, "all of A's 0..p-2");
  // And a range of N and of L with the same members: 1..p-2 (p >= 4: two members).
  s.split(N, 1, p - 2, 1, "N's 1..p-2");
  s.split(L, 1, p - 2, 1, "L's 1..p-2");
  s.split(M, 1, p - 2, 1, "M's 1..p-2");
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 1, 301);
}

TEST_CASE("the same members reached through different parents: strided ranges") {
  int p = mpitest::world_size();
  if (p < 3) return;  // needs the evens of the world to have two members
  Scene s;
  int A = s.split(0, 0, p - 1, 1, "A = world 0..p-1");
  int E = s.split(0, 0, p - 1, 2, "E = world evens");
  int ne = s[E].size();
  s.split(A, 0, p - 1, 2, "A's evens");
  s.split(E, 0, ne - 1, 1, "all of E");
  int E2 = s.split(0, 0, p - 1, 2, "world evens (a copy of E)");
  s.split(E2, 0, ne - 1, 1, "all of E's copy");
  // The evens through the world's 0..p-2 (the same members when p - 1 is odd).
  int L = s.split(0, 0, p - 2, 1, "L = world 0..p-2");
  s.split(L, 0, p - 2, 2, "L's evens");
  // The odds (p >= 4 for two members) as a range of the world and of 1..p-1.
  if (p >= 4) {
    int T = s.split(0, 1, p - 1, 1, "T = world 1..p-1");
    s.split(0, 1, p - 1, 2, "world odds");
    s.split(T, 0, p - 2, 2, "T's evens (the world's odds)");
  }
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 1, 401);
}

TEST_CASE("the same members as ranges, general groups and groups that are ranges") {
  int p = mpitest::world_size();
  if (p < 3) return;  // needs 0..p-2 to have two members
  Scene s;
  int A = s.split(0, 0, p - 1, 1, "A = world 0..p-1");
  s.split(A, 0, p - 2, 1, "N = A's 0..p-2");
  int L = s.split(0, 0, p - 2, 1, "L = world 0..p-2");
  s.split(L, 0, p - 2, 1, "M = all of L");
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  s.creation.clear();
  // General groups over the members 0..p-2, each created while all the above are alive.
  std::vector<int> reversed = iota_vec(p - 1);
  std::reverse(reversed.begin(), reversed.end());
  std::vector<int> rotated = iota_vec(p - 1);
  std::rotate(rotated.begin(), rotated.begin() + 1, rotated.end());
  std::vector<int> ascending = iota_vec(p - 1);
  s.group(A, reversed, 11, "A's 0..p-2 reversed (general group)");
  s.group(0, rotated, 12, "world 0..p-2 rotated (general group)");
  s.group(L, reversed, 13, "L reversed (general group)");
  s.group(A, reversed, 14, "A's 0..p-2 reversed again (general group)");
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  s.creation.clear();
  // Groups that happen to be ranges: made locally, the same as N and M.
  s.group(A, ascending, 15, "A's 0..p-2 ascending (group that is a range, = N)");
  s.group(L, ascending, 16, "L ascending (group that is a range, = M)");
  s.group(0, ascending, 17, "world 0..p-2 ascending (group that is a range, = L)");
  CHECK_LOG(s.creation);
  CHECK(s.agree() == 0);
  traffic(s, 1, 501);
}

TEST_CASE("two thousand live copies of the world range, each usable, freed in shuffled order") {
  Scene s;
  int p = mpitest::world_size();
  constexpr int kCopies = 2000;
  for (int copy = 1; copy <= kCopies; ++copy)
    s.split(0, 0, p - 1, 1, "world 0..p-1 copy " + std::to_string(copy));
  CHECK_LOG(s.creation);
  int failed = s.agree();
  CHECK(failed == 0);
  // An Allreduce of its index on every usable copy, all outstanding at once (in batches).
  std::vector<int> live = s.live();
  Log log;
  constexpr size_t kBatch = 500;
  for (size_t at = 0; at < live.size(); at += kBatch) {
    size_t n = std::min(kBatch, live.size() - at);
    std::vector<Request> reqs(n);
    auto bufs = std::make_unique<std::array<std::vector<int>, 2>>();  // leaked on a timeout
    std::vector<int>& mine = (*bufs)[0];
    std::vector<int>& sum = (*bufs)[1];
    mine.assign(n, 0);
    sum.assign(n, -1);
    for (size_t k = 0; k < n; ++k) {
      mine[k] = live[at + k];
      int rc = rangecomm::Iallreduce(&mine[k], &sum[k], 1, MPI_INT, MPI_SUM, s[live[at + k]].comm,
                                     &reqs[k]);
      if (rc != MPI_SUCCESS)
        log.add("Iallreduce on %d failed: %s", live[at + k], error_text(rc).c_str());
    }
    int flag = 0;
    double deadline = MPI_Wtime() + kWaitLimit;
    while (!flag && MPI_Wtime() < deadline) {
      int rc = rangecomm::Testall(static_cast<int>(n), reqs.data(), &flag, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        log.add("Testall failed: %s", error_text(rc).c_str());
        break;
      }
    }
    if (!flag) {
      log.add("Iallreduces %zu..%zu not complete after %g s", at, at + n - 1, kWaitLimit);
      for (auto& r : reqs) rangecomm::Request_free(&r);
      bufs.release();
    }
    for (size_t k = 0; flag && k < n; ++k)
      if (sum[k] != mine[k] * p)
        log.add("Allreduce on %d (%s) gave %d, expected %d", mine[k], s[mine[k]].what.c_str(),
                sum[k], mine[k] * p);
  }
  CHECK_LOG(log);
  REQUIRE(mpitest::all_ranks(log.empty()));
  // A round of point-to-point traffic on a few of them (the first, the last, some between).
  {
    Log t;
    std::vector<int> some;
    for (size_t k = 0; k < live.size(); k += 199) some.push_back(live[k]);
    if (!live.empty()) some.push_back(live.back());
    some.erase(std::unique(some.begin(), some.end()), some.end());
    exchange(s, some, 1, 601, &t);
    CHECK_LOG(t);
    REQUIRE(mpitest::all_ranks(t.empty()));
  }
  // Free them all in an order shuffled alike on every rank.
  std::mt19937_64 rng(602);
  std::shuffle(live.begin(), live.end(), rng);
  s.creation.clear();
  for (int i : live)
    if (i != 0) s.free(i);
  CHECK_LOG(s.creation);
  CHECK(s.live() == std::vector<int>{0});
}

TEST_CASE("a seeded torture of creations and frees with wildcard traffic on everything alive") {
  std::uint64_t seed = env_or("RANGECOMM_CONTEXTS_SEED", 20240611);
  int steps = static_cast<int>(env_or("RANGECOMM_CONTEXTS_STEPS", 200));
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);  // one plan for all ranks
  MPI_Bcast(&steps, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CAPTURE(seed);
  INFO("rerun with RANGECOMM_CONTEXTS_SEED=" << seed);
  constexpr int kMaxLive = 24;  // bounds the traffic per round
  Scene s;
  CHECK_LOG(s.creation);
  REQUIRE(s.agree() == 0);
  std::mt19937_64 rng(seed);  // the plan: draws alike on every rank
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto pick_of = [&](const std::vector<int>& v) {
    return v[static_cast<size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  };
  int created = 0, failed = 0, freed = 0, rounds = 0;
  std::string history;  // the plan's last steps, shown on failure
  auto note = [&](const std::string& line) {
    history += line + "\n";
    if (history.size() > 1500) history.erase(0, history.find('\n', history.size() - 1500) + 1);
  };

  // Where `members` (world ranks, ascending) lie in `parent` as a strided range, if they do.
  auto as_range = [&](const Entry& parent, const std::vector<int>& members, int* first, int* last,
                      int* stride) {
    std::vector<int> at;
    for (int m : members) {
      int i = parent.index_of(m);
      if (i < 0) return false;
      at.push_back(i);
    }
    if (at.empty()) return false;
    *first = at.front();
    *last = at.back();
    *stride = at.size() > 1 ? at[1] - at[0] : 1;
    if (*stride < 1) return false;
    for (size_t k = 1; k < at.size(); ++k)
      if (at[k] - at[k - 1] != *stride) return false;
    return true;
  };

  for (int step = 1; step <= steps; ++step) {
    std::vector<int> live = s.live();
    std::vector<int> freeable(live.begin() + 1, live.end());  // the world entry stays
    int action = pick(0, 99);
    char line[300];
    int made = -1;
    if (!freeable.empty() && (action < 20 || static_cast<int>(live.size()) >= kMaxLive)) {
      int victim = pick_of(freeable);
      std::snprintf(line, sizeof line, "step %d: free %d (%s)", step, victim,
                    s[victim].what.c_str());
      note(line);
      s.free(victim);
      ++freed;
    } else if (action < 50) {
      // A copy of a live communicator: the same creation again while its parent is alive,
      // otherwise all of it as a range of itself.
      int c = pick_of(live);
      const Entry& e = s[c];
      std::string what = "step " + std::to_string(step) + ": copy of " + std::to_string(c);
      if (e.parent >= 0 && s[e.parent].live) {
        if (e.group)
          made = s.group(e.parent, e.ranks, step, what + " (group again)");
        else
          made = s.split(e.parent, e.first, e.last, e.stride, what + " (split again)");
      } else {
        made = s.split(c, 0, e.size() - 1, 1, what + " (all of it)");
      }
    } else if (action < 64) {
      // A random sub-range.
      int c = pick_of(live);
      int n = s[c].size();
      int first = pick(0, n - 1), last = pick(first, n - 1);
      int stride = pick(1, std::max(1, std::min(3, last - first)));
      made = s.split(c, first, last, stride,
                     "step " + std::to_string(step) + ": " + std::to_string(c) + "'s " +
                         std::to_string(first) + ".." + std::to_string(last) + "/" +
                         std::to_string(stride));
    } else if (action < 82) {
      // The members of a live communicator through another live parent, as a range of it.
      int target = pick_of(live);
      std::vector<int> sorted = s[target].members;
      bool ascending = std::is_sorted(sorted.begin(), sorted.end());
      std::vector<int> parents;
      int f = 0, l = 0, st = 1;
      if (ascending)
        for (int c : live)
          if (c != s[target].parent && as_range(s[c], sorted, &f, &l, &st)) parents.push_back(c);
      if (!parents.empty()) {
        int c = pick_of(parents);
        as_range(s[c], sorted, &f, &l, &st);
        made = s.split(c, f, l, st,
                       "step " + std::to_string(step) + ": members of " + std::to_string(target) +
                           " as " + std::to_string(c) + "'s " + std::to_string(f) + ".." +
                           std::to_string(l) + "/" + std::to_string(st));
      } else {
        int c = pick_of(live);
        made = s.split(
            c, 0, s[c].size() - 1, 1,
            "step " + std::to_string(step) + ": all of " + std::to_string(c) + " (fallback)");
      }
    } else {
      // A general group: the members of another live communicator inside the parent, or a random
      // subset, in a shuffled order.
      int c = pick_of(live);
      const Entry& par = s[c];
      std::vector<int> ranks;
      if (pick(0, 1) == 0) {
        int other = pick_of(live);
        for (int m : s[other].members)
          if (par.index_of(m) >= 0) ranks.push_back(par.index_of(m));
      }
      if (ranks.empty())
        for (int r = 0; r < par.size(); ++r)
          if (pick(0, 2) > 0) ranks.push_back(r);
      if (ranks.empty()) ranks.push_back(pick(0, par.size() - 1));
      std::shuffle(ranks.begin(), ranks.end(), rng);
      std::string list;
      for (int r : ranks) list += (list.empty() ? "" : ",") + std::to_string(r);
      made = s.group(
          c, ranks, step,
          "step " + std::to_string(step) + ": group {" + list + "} of " + std::to_string(c));
    }
    if (made >= 0) {
      ++created;
      int bad = s.agree();
      failed += bad;
      std::snprintf(line, sizeof line, "%s -> %d%s", s[made].what.c_str(), made,
                    bad ? " FAILED" : "");
      note(line);
    }
    if (step % 8 == 0 || step == steps) {
      INFO("last steps:\n" << history);
      traffic(s, ++rounds, seed);
    }
  }
  INFO("created " << created << ", failed " << failed << ", freed " << freed << ", rounds "
                  << rounds);
  CHECK_LOG(s.creation);
  CHECK(failed == 0);
  for (int i : s.live())
    if (i != 0) s.free(i);
}
