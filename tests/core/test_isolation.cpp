// Isolation: no message on one communicator ever matches a receive or probe on another.
#include <algorithm>
#include <memory>

#include "p2p_util.hpp"

using namespace p2ptest;
using rangecomm::Comm;
using rangecomm::Request;

namespace {

constexpr int kTag = 7;

// One all-to-all round on a communicator, receives posted first (specific or ANY_SOURCE),
// then sends; the caller waits. Every member sends one Payload to every member, itself too.
struct Round {
  Comm comm;
  int id;
  bool wildcard;
  std::vector<Payload> in, out;
  std::vector<Request> requests;

  Round(Comm c, int comm_id, bool any_source)
      : comm(std::move(c)), id(comm_id), wildcard(any_source) {}

  void post_receives() {
    if (comm.is_null()) return;
    int n = comm.size();
    in.assign(n, Payload{-1, -1, -1, -1});
    for (int i = 0; i < n; ++i) {
      requests.emplace_back();
      REQUIRE(rangecomm::Irecv(&in[i], 1, payload_type(), wildcard ? MPI_ANY_SOURCE : i, kTag, comm,
                               &requests.back()) == MPI_SUCCESS);
    }
  }
  void post_sends() {
    if (comm.is_null()) return;
    int n = comm.size();
    out.resize(n);
    for (int i = 0; i < n; ++i) {
      out[i] = make_payload(id, comm.rank(), 0);
      requests.emplace_back();
      REQUIRE(rangecomm::Isend(&out[i], 1, payload_type(), i, kTag, comm, &requests.back()) ==
              MPI_SUCCESS);
    }
  }
  void check() const {
    if (comm.is_null()) return;
    std::vector<int> from(comm.size(), 0);
    for (const Payload& p : in) {
      CHECK(intact(p));
      CHECK(p.comm_id == id);
      if (p.sender >= 0 && p.sender < comm.size()) ++from[p.sender];
    }
    for (int f : from) CHECK(f == 1);
  }
};

// Runs rounds on all communicators at once, interleaved with raw traffic of the same tag on
// MPI_COMM_WORLD itself (the root's own user traffic must stay apart too).
void run_concurrently(std::vector<std::unique_ptr<Round>>& rounds) {
  int p = mpitest::world_size(), me = mpitest::world_rank();
  int raw_in = -1, raw_out = 1000 + me;
  MPI_Request raw[2];
  MPI_Irecv(&raw_in, 1, MPI_INT, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &raw[0]);
  for (auto& r : rounds) r->post_receives();
  MPI_Isend(&raw_out, 1, MPI_INT, (me + 1) % p, kTag, MPI_COMM_WORLD, &raw[1]);
  for (auto& r : rounds) r->post_sends();
  for (auto& r : rounds)
    REQUIRE(rangecomm::Waitall(static_cast<int>(r->requests.size()), r->requests.data(),
                               MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  MPI_Waitall(2, raw, MPI_STATUSES_IGNORE);
  CHECK(raw_in == 1000 + (me + p - 1) % p);
  for (auto& r : rounds) r->check();
}

// The range of world ranks 0 and p-1 (stride p-1), made at depth 4 below w so that it shares
// w's lane: traffic for it can arrive, and be taken out of MPI by a wildcard receive on w,
// before its receiver has made it. Every member of w must call this the same number of times.
Comm make_pair(const Comm& w) {
  const int p = w.size();
  Comm c = w;
  for (int d = 0; d < 3; ++d) {
    Comm next;
    REQUIRE(rangecomm::Split_Comm(c, 0, c.size() - 1, &next) == MPI_SUCCESS);
    c = next;
  }
  Comm pair;
  REQUIRE(rangecomm::Split_Comm(c, 0, p - 1, p - 1, &pair) == MPI_SUCCESS);
  return pair;
}

}  // namespace

TEST_CASE("the same tag on a parent, its halves, a strided child and a size-1 range at once") {
  Comm w = world();
  int p = mpitest::world_size(), h = p / 2, me = w.rank();
  for (bool wildcard : {false, true}) {
    std::vector<std::unique_ptr<Round>> rounds;
    Comm lo, hi, odd, self;
    if (h > 0) REQUIRE(rangecomm::Split_Comm(w, 0, h - 1, &lo) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(w, h, p - 1, &hi) == MPI_SUCCESS);
    if (p > 1) REQUIRE(rangecomm::Split_Comm(w, 1, p - 1, 2, &odd) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(w, me, me, &self) == MPI_SUCCESS);
    rounds.push_back(std::make_unique<Round>(w, 1, wildcard));
    rounds.push_back(std::make_unique<Round>(lo, 2, wildcard));
    rounds.push_back(std::make_unique<Round>(hi, 3, wildcard));
    rounds.push_back(std::make_unique<Round>(odd, 4, wildcard));
    rounds.push_back(std::make_unique<Round>(self, 5, wildcard));
    run_concurrently(rounds);
  }
}

TEST_CASE("overlapping ranges sharing several processes stay apart") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 3) return;
  for (bool wildcard : {false, true}) {
    std::vector<std::unique_ptr<Round>> rounds;
    Comm a, b, c;
    REQUIRE(rangecomm::Split_Comm(w, 0, p - 2, &a) == MPI_SUCCESS);     // 0..p-2
    REQUIRE(rangecomm::Split_Comm(w, 1, p - 1, &b) == MPI_SUCCESS);     // 1..p-1
    REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 2, &c) == MPI_SUCCESS);  // evens
    rounds.push_back(std::make_unique<Round>(a, 11, wildcard));
    rounds.push_back(std::make_unique<Round>(b, 12, wildcard));
    rounds.push_back(std::make_unique<Round>(c, 13, wildcard));
    run_concurrently(rounds);
  }
}

TEST_CASE("the two sides of a janus process") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  int j = p / 2;  // member of both [0..j] and [j..p-1]
  for (bool wildcard : {false, true}) {
    std::vector<std::unique_ptr<Round>> rounds;
    Comm left, right;
    REQUIRE(rangecomm::Split_Comm(w, 0, j, &left) == MPI_SUCCESS);
    REQUIRE(rangecomm::Split_Comm(w, j, p - 1, &right) == MPI_SUCCESS);
    rounds.push_back(std::make_unique<Round>(left, 21, wildcard));
    rounds.push_back(std::make_unique<Round>(right, 22, wildcard));
    run_concurrently(rounds);
  }
}

TEST_CASE("ranges nested ten deep use the same tag at every level") {
  Comm w = world();
  int p = mpitest::world_size();
  for (bool wildcard : {false, true}) {
    std::vector<std::unique_ptr<Round>> rounds;
    Comm c = w;
    rounds.push_back(std::make_unique<Round>(c, 100, wildcard));
    for (int depth = 1; depth <= 10; ++depth) {
      Comm next;
      // Alternately drop the first or the last member while more than two remain; then keep
      // the same members (a range equal to its parent is a different communicator).
      int first = 0, last = c.is_null() ? 0 : c.size() - 1;
      if (!c.is_null() && c.size() > 2) (depth % 2 ? first : last) += depth % 2 ? 1 : -1;
      if (!c.is_null()) REQUIRE(rangecomm::Split_Comm(c, first, last, &next) == MPI_SUCCESS);
      rounds.push_back(std::make_unique<Round>(next, 100 + depth, wildcard));
      c = next;
    }
    (void)p;
    run_concurrently(rounds);
  }
}

TEST_CASE("a wildcard receive skips foreign traffic of the same tag that arrived first") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 3) return;
  // left = 0..1, right = 1..p-1: rank 2 sends to rank 1 on `right` before rank 0 sends to it on
  // `left`; rank 1's ANY_SOURCE receive on `left` must get rank 0's message (RBC's known bug).
  Comm left, right;
  REQUIRE(rangecomm::Split_Comm(w, 0, 1, &left) == MPI_SUCCESS);
  REQUIRE(rangecomm::Split_Comm(w, 1, p - 1, &right) == MPI_SUCCESS);
  int me = mpitest::world_rank();
  Payload foreign = make_payload(32, 1, 0), wanted = make_payload(31, 0, 0),
          raw = make_payload(0, 2, 0);
  if (me == 2) {
    REQUIRE(rangecomm::Send(&foreign, 1, payload_type(), 0, kTag, right) ==
            MPI_SUCCESS);  // to world 1
    MPI_Send(&raw, 1, payload_type(), 1, kTag, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // both foreign messages are on their way before anything else
  if (me == 0) REQUIRE(rangecomm::Send(&wanted, 1, payload_type(), 1, kTag, left) == MPI_SUCCESS);
  if (me == 1) {
    // Let the foreign messages arrive first.
    int flag = 0;
    MPI_Status st;
    while (!flag) MPI_Iprobe(2, kTag, MPI_COMM_WORLD, &flag, &st);
    Payload got{};
    int seen = 0;
    while (!seen) REQUIRE(rangecomm::Iprobe(MPI_ANY_SOURCE, kTag, left, &seen, &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == 0);
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), MPI_ANY_SOURCE, kTag, left, &st) ==
            MPI_SUCCESS);
    CHECK(got.comm_id == 31);
    CHECK(st.MPI_SOURCE == 0);
    CHECK(st.MPI_TAG == kTag);
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), MPI_ANY_SOURCE, MPI_ANY_TAG, right, &st) ==
            MPI_SUCCESS);
    CHECK(got.comm_id == 32);
    CHECK(st.MPI_SOURCE == 1);  // rank 2 of the world is rank 1 of `right`
    MPI_Recv(&got, 1, payload_type(), 2, kTag, MPI_COMM_WORLD, &st);
    CHECK(got.comm_id == 0);
  }
}

TEST_CASE("ANY_TAG receives and probes report the sender's rank and tag of their own range") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  Comm evens;
  REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, 2, &evens) == MPI_SUCCESS);
  int me = w.rank();
  // Rank 1 (not in evens) sends to rank 0 on the world range with tag 9: evens must not see it.
  if (me == 1) {
    Payload x = make_payload(40, 1, 0);
    REQUIRE(rangecomm::Send(&x, 1, payload_type(), 0, 9, w) == MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (!evens.is_null() && evens.size() > 1) {
    if (evens.rank() == 1) {
      Payload x = make_payload(41, 1, 0);
      REQUIRE(rangecomm::Send(&x, 1, payload_type(), 0, 321, evens) == MPI_SUCCESS);
    }
    if (evens.rank() == 0) {
      MPI_Status st;
      REQUIRE(rangecomm::Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, evens, &st) == MPI_SUCCESS);
      CHECK(st.MPI_SOURCE == 1);
      CHECK(st.MPI_TAG == 321);
      CHECK(count_of(st, payload_type()) == 1);
      Payload got{};
      REQUIRE(rangecomm::Recv(&got, 1, payload_type(), 1, MPI_ANY_TAG, evens, &st) == MPI_SUCCESS);
      CHECK(got.comm_id == 41);
      CHECK(st.MPI_TAG == 321);
      int flag = 1;
      REQUIRE(rangecomm::Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, evens, &flag, &st) == MPI_SUCCESS);
      CHECK(flag == 0);
    }
  }
  if (me == 0) {
    Payload got{};
    MPI_Status st;
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), MPI_ANY_SOURCE, MPI_ANY_TAG, w, &st) ==
            MPI_SUCCESS);
    CHECK(got.comm_id == 40);
    CHECK(st.MPI_SOURCE == 1);
    CHECK(st.MPI_TAG == 9);
  }
}

TEST_CASE("messages for a range its receiver has not created yet wait for it") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  int me = w.rank();
  // Rank 0 creates the pair range and sends at once; rank p-1 first drains unrelated wildcard
  // traffic on the world range (which takes everything on its lane out of MPI's queue), then
  // creates it.
  if (me == 0) {
    Comm pair = make_pair(w);
    Payload x = make_payload(50, 0, 0);
    REQUIRE(rangecomm::Send(&x, 1, payload_type(), 1, kTag, pair) == MPI_SUCCESS);
    Payload y = make_payload(51, 0, 0);
    REQUIRE(rangecomm::Send(&y, 1, payload_type(), p - 1, kTag, w) == MPI_SUCCESS);
  }
  if (me == p - 1) {
    Payload got{};
    MPI_Status st;
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), MPI_ANY_SOURCE, MPI_ANY_TAG, w, &st) ==
            MPI_SUCCESS);
    CHECK(got.comm_id == 51);
    Comm pair = make_pair(w);
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), 0, kTag, pair, &st) == MPI_SUCCESS);
    CHECK(got.comm_id == 50);
  }
  // The others make the same ranges too: the k-th identical range of a parent is the same
  // communicator at every member only if every member makes it.
  if (me != 0 && me != p - 1) make_pair(w);
}

TEST_CASE("a collective's first messages travel inside the bindings, in order with the rest") {
  Comm w = world();
  int p = mpitest::world_size(), me = w.rank();
  // A vector of ints with gaps: the receive must leave the gaps alone.
  MPI_Datatype gappy;
  MPI_Type_vector(6, 1, 2, MPI_INT, &gappy);
  MPI_Type_commit(&gappy);
  for (int iteration = 0; iteration < 12; ++iteration) {
    Comm c;  // a new communicator each time: every message below is a first contact
    REQUIRE(rangecomm::Split_Comm(w, 0, p - 1, &c) == MPI_SUCCESS);
    const int root = iteration % p;
    // A wildcard point-to-point receive posted first must get the point-to-point message
    // sent after the collectives, not a collective's data.
    Payload wild{-1, -1, -1, -1};
    Request wild_request;
    REQUIRE(rangecomm::Irecv(&wild, 1, payload_type(), MPI_ANY_SOURCE, MPI_ANY_TAG, c,
                             &wild_request) == MPI_SUCCESS);
    std::vector<int> small(8), large(600), spaced(12, -7);
    for (int i = 0; i < 8; ++i) small[i] = me == root ? 100 * iteration + i : -1;
    for (int i = 0; i < 600; ++i) large[i] = me == root ? 7 * i + iteration : -1;
    for (int i = 0; i < 6; ++i) spaced[2 * i] = me == root ? 1000 + i : -1;
    Request r[4];
    int mine = me + 1, sum = -1;
    // Odd iterations start with the large broadcast, too large to go inside a binding (a
    // binding of its own precedes it), even ones with the small one, and every third with the
    // gapped type.
    auto small_bcast = [&] { return rangecomm::Ibcast(small.data(), 8, MPI_INT, root, c, &r[0]); };
    auto large_bcast = [&] {
      return rangecomm::Ibcast(large.data(), 600, MPI_INT, root, c, &r[1]);
    };
    auto spaced_bcast = [&] { return rangecomm::Ibcast(spaced.data(), 1, gappy, root, c, &r[2]); };
    if (iteration % 3 == 2) REQUIRE(spaced_bcast() == MPI_SUCCESS);
    if (iteration % 2 == 1) REQUIRE(large_bcast() == MPI_SUCCESS);
    REQUIRE(small_bcast() == MPI_SUCCESS);
    if (iteration % 2 == 0) REQUIRE(large_bcast() == MPI_SUCCESS);
    if (iteration % 3 != 2) REQUIRE(spaced_bcast() == MPI_SUCCESS);
    REQUIRE(rangecomm::Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c, &r[3]) == MPI_SUCCESS);
    for (int i = 3; i >= 0; --i)  // the later ones first
      REQUIRE(rangecomm::Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int i = 0; i < 8; ++i) CHECK(small[i] == 100 * iteration + i);
    for (int i = 0; i < 600; ++i) CHECK(large[i] == 7 * i + iteration);
    for (int i = 0; i < 6; ++i) {
      CHECK(spaced[2 * i] == 1000 + i);
      CHECK(spaced[2 * i + 1] == -7);
    }
    CHECK(sum == p * (p + 1) / 2);
    Payload out = make_payload(iteration, me, 0);
    REQUIRE(rangecomm::Send(&out, 1, payload_type(), (me + 1) % p, kTag, c) == MPI_SUCCESS);
    MPI_Status st;
    REQUIRE(rangecomm::Wait(&wild_request, &st) == MPI_SUCCESS);
    CHECK(intact(wild));
    CHECK(wild.comm_id == iteration);
    CHECK(wild.sender == (me + p - 1) % p);
    CHECK(st.MPI_SOURCE == (me + p - 1) % p);
    CHECK(st.MPI_TAG == kTag);
    REQUIRE(rangecomm::Comm_free(&c) == MPI_SUCCESS);
  }
  MPI_Type_free(&gappy);
}

TEST_CASE("a collective message inside a binding waits for a range its receiver makes later") {
  Comm w = world();
  int p = mpitest::world_size();
  if (p < 2) return;
  int me = w.rank();
  // As for point-to-point above: the pair shares the world range's lane, so rank p-1's wildcard
  // receive there takes the broadcast's binding (and data) out of MPI before the pair exists.
  // The root sends through a gapless type that lists its two ints backwards, the receiver
  // takes plain ints: the bytes inside the binding must be the packed form, not the memory.
  MPI_Datatype backwards;
  const int lengths[2] = {1, 1}, displacements[2] = {1, 0};
  MPI_Type_indexed(2, lengths, displacements, MPI_INT, &backwards);
  MPI_Type_commit(&backwards);
  int data[4] = {-1, -1, -1, -1};
  if (me == 0) {
    Comm pair = make_pair(w);
    data[0] = 31, data[1] = 32, data[2] = 33, data[3] = 34;
    REQUIRE(rangecomm::Bcast(data, 2, backwards, 0, pair) == MPI_SUCCESS);
    Payload y = make_payload(52, 0, 0);
    REQUIRE(rangecomm::Send(&y, 1, payload_type(), p - 1, kTag, w) == MPI_SUCCESS);
  }
  if (me == p - 1) {
    Payload got{};
    MPI_Status st;
    REQUIRE(rangecomm::Recv(&got, 1, payload_type(), MPI_ANY_SOURCE, MPI_ANY_TAG, w, &st) ==
            MPI_SUCCESS);
    CHECK(got.comm_id == 52);
    Comm pair = make_pair(w);
    REQUIRE(rangecomm::Bcast(data, 4, MPI_INT, 0, pair) == MPI_SUCCESS);
    CHECK(data[0] == 32);
    CHECK(data[1] == 31);
    CHECK(data[2] == 34);
    CHECK(data[3] == 33);
  }
  if (me != 0 && me != p - 1) make_pair(w);
  MPI_Type_free(&backwards);
}
