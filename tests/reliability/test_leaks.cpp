// Create/free cycles leak nothing: range communicators, point-to-point requests (completed,
// cancelled, freed while active, destroyed while active, matched messages dropped), nonblocking
// collectives (on ranges freed while they run, with datatypes and operations freed meanwhile),
// failed calls, and whole attach/detach cycles of a root communicator.
//
// Two checks per case. In every build, the bytes C++ code holds (operator new, counted by
// new_counter.cpp: rangecomm's blocks, not MPI's) must not grow over a batch of cycles once a
// warm-up batch has filled every cache; MPI's own heap is left out because its free lists grow
// with the timing of the traffic. In sanitized builds LeakSanitizer must also find no
// unreachable block outside the MPI libraries (tests/reliability/lsan-*.supp).
#include <rangecomm/embedding.hpp>
#include <rangecomm/rangecomm.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <numeric>
#include <vector>

#include "comm/range.hpp"
#include "rel_util.hpp"

using rangecomm::Comm;
using rangecomm::Request;

namespace {

// Allowed growth over a measured batch: a leak of one of the library's blocks (80 bytes or
// more) per cycle exceeds it within 50 cycles; containers reaching a new high-water mark of
// capacity, and the pool of small schedules settling, stay below it.
constexpr long long kSlackBytes = 4096;

// Lets every outstanding operation finish (freed and orphaned ones included) on every rank.
void settle() {
  MPI_Barrier(MPI_COMM_WORLD);
  while (rangecomm::Progress_needed()) rangecomm::Progress();
  MPI_Barrier(MPI_COMM_WORLD);
}

// Runs cycle(i) `warmup` times, then kBatches measured batches of `rounds`; returns the largest,
// over ranks, of the smallest growth of the C++ bytes in use over the batches. A leak grows
// every batch alike; a container or pool reaching a new high-water mark (which depends on the
// timing of the traffic) grows a batch now and then: on a loaded machine two batches in a row
// were seen to (6.5 KB, once), so the smallest of three is taken. *ok turns false if a cycle
// reported a failure.
constexpr int kBatches = 3;
template <class Cycle>
long long growth_over(int warmup, int rounds, Cycle&& cycle, bool* ok) {
  for (int i = 0; i < warmup; ++i) *ok = cycle(i) && *ok;
  settle();
  long long grown = LLONG_MAX;
  for (int batch = 0; batch < kBatches; ++batch) {
    const long long before = reltest::cxx_bytes_in_use();
    for (int i = 0; i < rounds; ++i) *ok = cycle(warmup + batch * rounds + i) && *ok;
    settle();
    grown = std::min(grown, reltest::cxx_bytes_in_use() - before);
  }
  long long worst = 0;
  MPI_Allreduce(&grown, &worst, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

void check_cycles(const char* what, int warmup, int rounds, const std::function<bool(int)>& cycle) {
  bool ok = true;
  const long long grown = growth_over(warmup, rounds, cycle, &ok);
  INFO(what << ": C++ heap grew by " << grown << " bytes over " << rounds
            << " cycles (the smallest of " << kBatches << " batches)");
  CHECK(mpitest::all_ranks(ok));
  CHECK(grown <= kSlackBytes);
  CHECK_FALSE(mpitest::any_rank(reltest::leaks_found()));
}

}  // namespace

TEST_CASE("range communicators: create/free cycles of every shape") {
  Comm w = reltest::world();
  const int p = w.size(), r = w.rank(), h = p / 2;
  check_cycles("ranges", 200, 2000, [&](int) {
    bool ok = true;
    auto split = [&](const Comm& parent, int first, int last, int stride, Comm* out) {
      ok = rangecomm::Split_Comm(parent, first, last, stride, out) == MPI_SUCCESS && ok;
    };
    Comm whole, left, right, strided, self, copy;
    split(w, 0, p - 1, 1, &whole);
    if (r <= h) split(whole, 0, h, 1, &left);  // janus sides: process h is in both
    if (r >= h) split(whole, h, p - 1, 1, &right);
    split(w, r % 2, p - 1, 2, &strided);
    split(w, r, r, 1, &self);
    Comm nest = strided;  // six levels, each re-split into the same handle
    for (int level = 0; level < 6; ++level) split(nest, 0, nest.size() - 1, 1, &nest);
    copy = left.is_null() ? right : left;  // a copy outlives the handle it came from
    Comm& side = left.is_null() ? right : left;
    ok = rangecomm::Comm_free(&side) == MPI_SUCCESS && ok;
    ok = copy.rank() != MPI_UNDEFINED && ok;
    for (Comm* c : {&whole, &strided, &self, &nest, &copy})
      ok = rangecomm::Comm_free(c) == MPI_SUCCESS && ok;
    return ok;
  });
}

// General groups: two creations in flight at once (the reversed world and the world with its
// first two swapped), a message on each, then freed; and a range of a general group.
TEST_CASE("general groups: create/free cycles, concurrent creations") {
  Comm w = reltest::world();
  const int p = w.size(), r = w.rank();
  if (p < 2) return;
  std::vector<int> down(p), swapped(p);
  for (int i = 0; i < p; ++i) down[i] = p - 1 - i, swapped[i] = i;
  std::swap(swapped[0], swapped[1]);
  check_cycles("general groups", 20, 100, [&](int i) {
    bool ok = true;
    Comm a, b, sub;
    rangecomm::Request ra, rb;
    // Tags from a fixed set: a parent keeps one creation count per distinct creation (group and
    // tag), so cycles of new tags would grow by design, not by a leak.
    const int tag = 2 * (i % 4);
    ok = rangecomm::Icomm_create_group(w, down.data(), p, tag, &a, &ra) == MPI_SUCCESS && ok;
    ok = rangecomm::Icomm_create_group(w, swapped.data(), p, tag + 1, &b, &rb) == MPI_SUCCESS && ok;
    ok = rangecomm::Wait(&rb, MPI_STATUS_IGNORE) == MPI_SUCCESS && ok;
    ok = rangecomm::Wait(&ra, MPI_STATUS_IGNORE) == MPI_SUCCESS && ok;
    int out = r, in = -1;
    ok = rangecomm::Sendrecv(&out, 1, MPI_INT, (a.rank() + 1) % p, 0, &in, 1, MPI_INT,
                             MPI_ANY_SOURCE, 0, a, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
         ok;
    ok = in == down[(a.rank() + p - 1) % p] && ok;
    // (All of b one level down could be a copy of a: at p = 2 both have the same members.)
    if (b.rank() >= 1) ok = rangecomm::Split_Comm(b, 1, p - 1, 1, &sub) == MPI_SUCCESS && ok;
    if (!sub.is_null()) ok = rangecomm::Comm_free(&sub) == MPI_SUCCESS && ok;
    for (Comm* c : {&a, &b}) ok = rangecomm::Comm_free(c) == MPI_SUCCESS && ok;
    return ok;
  });
}

// One cycle of ring traffic on w and on a range freed while its receive is pending.
bool p2p_cycle(const Comm& w, int i) {
  const int p = w.size(), r = w.rank(), right = (r + 1) % p, left = (r + p - 1) % p;
  bool ok = true;
  auto good = [&](int rc) { ok = rc == MPI_SUCCESS && ok; };
  std::array<int, 8> in{}, out{};
  out.fill(i);
  std::array<Request, 8> q;
  good(rangecomm::Irecv(&in[0], 1, MPI_INT, left, 1, w, &q[0]));            // direct
  good(rangecomm::Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 2, w, &q[1]));  // engine
  good(rangecomm::Irecv(&in[2], 1, MPI_INT, left, MPI_ANY_TAG, w, &q[2]));  // engine
  good(rangecomm::Isend(&out[0], 1, MPI_INT, right, 1, w, &q[3]));
  good(rangecomm::Issend(&out[1], 1, MPI_INT, right, 2, w, &q[4]));
  good(rangecomm::Isend(&out[2], 1, MPI_INT, right, 3, w, &q[5]));
  good(rangecomm::Isend(&out[3], 1, MPI_INT, r, 4, w, &q[6]));  // to self
  good(rangecomm::Irecv(&in[3], 1, MPI_INT, r, 4, w, &q[7]));
  good(rangecomm::Waitall(8, q.data(), MPI_STATUSES_IGNORE));
  ok = in[0] == i && in[1] == i && in[2] == i && in[3] == i && ok;

  // Cancelled receives, on both paths.
  Request c1, c2;
  good(rangecomm::Irecv(&in[4], 1, MPI_INT, MPI_ANY_SOURCE, 9, w, &c1));
  good(rangecomm::Irecv(&in[5], 1, MPI_INT, left, 9, w, &c2));
  good(rangecomm::Cancel(&c1));
  good(rangecomm::Cancel(&c2));
  good(rangecomm::Wait(&c1, MPI_STATUS_IGNORE));
  good(rangecomm::Wait(&c2, MPI_STATUS_IGNORE));

  // A send freed while active, a receive destroyed while active (both still complete), and
  // a matched message dropped without being received.
  static int orphan_in = 0;
  {
    Request gone;
    good(rangecomm::Irecv(&orphan_in, 1, MPI_INT, MPI_ANY_SOURCE, 6, w, &gone));
  }
  Request freed;
  good(rangecomm::Isend(&out[4], 1, MPI_INT, right, 5, w, &freed));
  good(rangecomm::Request_free(&freed));
  good(rangecomm::Recv(&in[6], 1, MPI_INT, left, 5, w, MPI_STATUS_IGNORE));
  good(rangecomm::Send(&out[5], 1, MPI_INT, right, 6, w));
  good(rangecomm::Send(&out[6], 1, MPI_INT, right, 7, w));
  {
    rangecomm::Message dropped;
    good(rangecomm::Mprobe(left, 7, w, &dropped, MPI_STATUS_IGNORE));
  }

  // A range freed while its receive is pending; probes and a matched receive from self.
  Comm c;
  good(rangecomm::Split_Comm(w, 0, p - 1, &c));
  Request pending;
  good(rangecomm::Irecv(&in[7], 1, MPI_INT, MPI_ANY_SOURCE, 0, c, &pending));
  good(rangecomm::Sendrecv(&out[7], 1, MPI_INT, right, 0, &in[6], 1, MPI_INT, left, 0, w,
                           MPI_STATUS_IGNORE));
  good(rangecomm::Send(&out[7], 1, MPI_INT, right, 0, c));
  good(rangecomm::Comm_free(&c));
  good(rangecomm::Wait(&pending, MPI_STATUS_IGNORE));
  good(rangecomm::Send(&out[0], 1, MPI_INT, r, 11, w));
  int flag = 0;
  rangecomm::Message m;
  while (!flag) good(rangecomm::Improbe(r, 11, w, &flag, &m, MPI_STATUS_IGNORE));
  good(rangecomm::Mrecv(&in[0], 1, MPI_INT, &m, MPI_STATUS_IGNORE));
  return ok && in[7] == i;
}

TEST_CASE("point-to-point requests: completed, cancelled, freed, destroyed, dropped") {
  Comm w = reltest::world();
  check_cycles("point-to-point", 30, 200, [&](int i) { return p2p_cycle(w, i); });
}

namespace {

void add_ints(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int k = 0; k < *len; ++k) static_cast<int*>(inout)[k] += static_cast<int*>(in)[k];
}

// Starts nonblocking collectives of every family on a fresh range, frees the range, the datatype
// and the user operation while they run, then completes them and checks the results. At most
// eight run at once: the schedule pool keeps eight, so its contents settle in the warm-up
// (with more, which schedules it keeps, and their capacity, varies from cycle to cycle).
bool collectives_cycle(const Comm& w, int i) {
  const int p = w.size(), r = w.rank(), n = 3;
  bool ok = true;
  auto good = [&](int rc) { ok = rc == MPI_SUCCESS && ok; };
  Comm c;
  good(rangecomm::Split_Comm(w, 0, p - 1, &c));
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Op op;
  MPI_Op_create(add_ints, 1, &op);
  const std::vector<int> mine(2 * n * p, r + i);
  std::vector<int> bc(2 * n, r == 0 ? i : -1), sum(n, -1), all(2 * n * p, -1), scan(n, -1);
  std::vector<int> rsb(n, -1), gathered(2 * n * p, -1), a2a(2 * p, -1), max(n, -1), ex(n, -1);
  std::vector<int> counts(p, 2 * n), displs(p);
  for (int k = 0; k < p; ++k) displs[k] = 2 * n * k;
  std::vector<Request> q(8);
  good(rangecomm::Ibcast(bc.data(), n, pair, 0, c, &q[0]));
  good(rangecomm::Iallreduce(mine.data(), sum.data(), n, MPI_INT, op, c, &q[1]));
  good(rangecomm::Iallgather(mine.data(), n, pair, all.data(), n, pair, c, &q[2]));
  good(rangecomm::Iscan(mine.data(), scan.data(), n, MPI_INT, MPI_SUM, c, &q[3]));
  good(rangecomm::Ireduce_scatter_block(mine.data(), rsb.data(), n, MPI_INT, MPI_SUM, c, &q[4]));
  good(rangecomm::Igatherv(mine.data(), 2 * n, MPI_INT, gathered.data(), counts.data(),
                           displs.data(), MPI_INT, 0, c, &q[5]));
  good(rangecomm::Ialltoall(mine.data(), 2, MPI_INT, a2a.data(), 2, MPI_INT, c, &q[6]));
  good(rangecomm::Ireduce(mine.data(), max.data(), n, MPI_INT, MPI_MAX, p - 1, c, &q[7]));
  Comm keep = c;  // for the second batch, after the handle the first batch used is freed
  good(rangecomm::Comm_free(&c));
  MPI_Type_free(&pair);
  if (!rangecomm::Defer_op_free(op)) MPI_Op_free(&op);
  good(rangecomm::Waitall(static_cast<int>(q.size()), q.data(), MPI_STATUSES_IGNORE));
  good(rangecomm::Iexscan(mine.data(), ex.data(), n, MPI_INT, MPI_SUM, keep, &q[0]));
  good(rangecomm::Ibarrier(keep, &q[1]));
  good(rangecomm::Waitall(2, q.data(), MPI_STATUSES_IGNORE));
  const int total = p * i + p * (p - 1) / 2;
  ok = sum[0] == total && rsb[n - 1] == total && bc[2 * n - 1] == i && ok;
  ok = scan[0] == (r + 1) * i + r * (r + 1) / 2 && all[2 * n * p - 1] == p - 1 + i && ok;
  ok = a2a[2 * p - 1] == p - 1 + i && (r != p - 1 || max[0] == p - 1 + i) && ok;
  ok = (r == 0 || ex[0] == r * i + r * (r - 1) / 2) && ok;
  return ok && (r != 0 || gathered.back() == p - 1 + i);
}

// Blocking collectives long enough for the ring and pipelined algorithms; their scratch blocks
// (over 64 kB at up to 8 ranks) are too large for the schedule pool to keep.
bool long_collectives_cycle(const Comm& w, int i) {
  const int p = w.size(), r = w.rank(), count = 150000;
  std::vector<int> big(count, r + i), sum(count, -1);
  bool ok = rangecomm::Allreduce(big.data(), sum.data(), count, MPI_INT, MPI_SUM, w) == MPI_SUCCESS;
  ok = rangecomm::Bcast(big.data(), count, MPI_INT, p - 1, w) == MPI_SUCCESS && ok;
  return ok && sum.back() == p * i + p * (p - 1) / 2 && big.front() == p - 1 + i;
}

}  // namespace

TEST_CASE("nonblocking collectives on ranges freed while they run") {
  Comm w = reltest::world();
  check_cycles("collectives", 60, 150, [&](int i) { return collectives_cycle(w, i); });
}

TEST_CASE("long blocking collectives") {
  Comm w = reltest::world();
  check_cycles("long collectives", 5, 30, [&](int i) { return long_collectives_cycle(w, i); });
}

TEST_CASE("failed calls leak nothing") {
  Comm w = reltest::world();
  const int p = w.size();
  check_cycles("failed calls", 100, 1000, [&](int) {
    Comm a, b;
    bool ok = rangecomm::Split_Comm(w, 0, p - 1, &a) == MPI_SUCCESS;
    ok = reltest::error_class(rangecomm::Split_Comm(w, 0, p - 1, 0, &b)) == MPI_ERR_ARG && ok;
    int x = 0;
    Request q;
    ok = reltest::error_class(rangecomm::Isend(&x, 1, MPI_INT, p, 0, w, &q)) == MPI_ERR_RANK && ok;
    ok = reltest::error_class(rangecomm::Irecv(&x, 1, MPI_INT, 0, -5, w, &q)) == MPI_ERR_TAG && ok;
    ok = reltest::error_class(rangecomm::Ibcast(&x, 1, MPI_INT, p, a, &q)) == MPI_ERR_ROOT && ok;
    ok = reltest::error_class(rangecomm::Split_Comm(a, 0, p, &b)) == MPI_ERR_RANK && ok;
    return ok && q.is_null();
  });
}

TEST_CASE("attach/detach cycles of a root communicator") {
  check_cycles("attach/detach", 5, 50, [&](int i) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    Comm root, c;
    bool ok = rangecomm::Create_Comm(dup, &root) == MPI_SUCCESS;
    const int p = root.size(), r = root.rank();
    ok = rangecomm::Split_Comm(root, 0, p - 1, &c) == MPI_SUCCESS && ok;
    int got = -1;
    ok = rangecomm::Sendrecv(&i, 1, MPI_INT, (r + 1) % p, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, 3, c,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS &&
         ok;
    int sum = 0;
    ok = rangecomm::Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && ok;
    // The ranges outlive nothing: the channel goes with the MPI communicator.
    c = Comm();
    root = Comm();
    MPI_Comm_free(&dup);
    return ok && got == i && sum == p * (p - 1) / 2;
  });
}

TEST_CASE("out of memory while making a range is MPI_ERR_NO_MEM, leaks nothing, and passes") {
  Comm w = reltest::world();
  const int p = w.size();
  bool first_failed = false;
  // Range states are recycled (range.hpp): off here, so that every creation allocates one
  // (back on when the test ends, also by a failed REQUIRE).
  struct NoRecycling {
    NoRecycling() { rangecomm::detail::g_recycle_range_states = false; }
    ~NoRecycling() { rangecomm::detail::g_recycle_range_states = true; }
  } no_recycling;
  check_cycles("out of memory", 20, 200, [&](int i) {
    Comm c;
    reltest::fail_allocation_after(i % 4);  // the 1st, 2nd, ... allocation of the creation fails
    const int rc = rangecomm::Split_Comm(w, 0, p - 1, &c);
    reltest::fail_allocation_after(-1);
    bool ok = true;
    if (rc != MPI_SUCCESS) {
      ok = reltest::error_class(rc) == MPI_ERR_NO_MEM && c.is_null();
      if (i % 4 == 0) first_failed = true;
    } else {
      ok = !c.is_null() && c.size() == p;
    }
    c = Comm();
    Comm again;  // nothing of a failed attempt is left registered: the same range works
    ok = rangecomm::Split_Comm(w, 0, p - 1, &again) == MPI_SUCCESS && !again.is_null() && ok;
    return ok;
  });
  CHECK(first_failed);  // the injection did reach the creation
}
