// Non-overtaking: messages with the same (source, tag) arrive in send order on every path.
#include "p2p_util.hpp"

using namespace p2ptest;
using rangecomm::Comm;
using rangecomm::Message;
using rangecomm::Request;

namespace {

constexpr int kMessages = 160;
constexpr int kTag = 3;
constexpr int kPaths = 8;

// Receives one message from `source` (a rank, possibly this process) by path number `path`.
Payload receive_by(int path, int source, const Comm& c) {
  Payload got{-1, -1, -1, -1};
  MPI_Status st;
  MPI_Datatype t = payload_type();
  switch (path) {
    case 0:
      REQUIRE(rangecomm::Recv(&got, 1, t, source, kTag, c, &st) == MPI_SUCCESS);
      break;
    case 1: {
      Request r;
      REQUIRE(rangecomm::Irecv(&got, 1, t, source, kTag, c, &r) == MPI_SUCCESS);
      REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
      break;
    }
    case 2:
      REQUIRE(rangecomm::Recv(&got, 1, t, MPI_ANY_SOURCE, kTag, c, &st) == MPI_SUCCESS);
      break;
    case 3:
      REQUIRE(rangecomm::Recv(&got, 1, t, source, MPI_ANY_TAG, c, &st) == MPI_SUCCESS);
      break;
    case 4:
      REQUIRE(rangecomm::Probe(source, kTag, c, &st) == MPI_SUCCESS);
      REQUIRE(rangecomm::Recv(&got, 1, t, source, kTag, c, &st) == MPI_SUCCESS);
      break;
    case 5: {
      Message m;
      REQUIRE(rangecomm::Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &m, &st) == MPI_SUCCESS);
      REQUIRE(rangecomm::Mrecv(&got, 1, t, &m, &st) == MPI_SUCCESS);
      break;
    }
    case 6: {
      Message m;
      int flag = 0;
      while (!flag) REQUIRE(rangecomm::Improbe(source, kTag, c, &flag, &m, &st) == MPI_SUCCESS);
      Request r;
      REQUIRE(rangecomm::Imrecv(&got, 1, t, &m, &r) == MPI_SUCCESS);
      REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
      break;
    }
    default: {
      int flag = 0;
      while (!flag) REQUIRE(rangecomm::Iprobe(MPI_ANY_SOURCE, kTag, c, &flag, &st) == MPI_SUCCESS);
      REQUIRE(rangecomm::Recv(&got, 1, t, st.MPI_SOURCE, kTag, c, &st) == MPI_SUCCESS);
      break;
    }
  }
  CHECK(st.MPI_SOURCE == source);
  CHECK(st.MPI_TAG == kTag);
  return got;
}

}  // namespace

TEST_CASE("a ring of senders: every receive path keeps send order") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  // Each sender sends all messages nonblocking; the receiver cycles through the paths.
  std::vector<Payload> out(kMessages);
  std::vector<Request> sends(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    out[i] = make_payload(1, me, i);
    REQUIRE(rangecomm::Isend(&out[i], 1, payload_type(), to, kTag, w, &sends[i]) == MPI_SUCCESS);
  }
  for (int i = 0; i < kMessages; ++i) {
    Payload got = receive_by(i % kPaths, from, w);
    CHECK(intact(got));
    CHECK(got.sender == from);
    CHECK(got.seq == i);
  }
  REQUIRE(rangecomm::Waitall(kMessages, sends.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
}

TEST_CASE("wildcard and specific receives posted together match in posting order") {
  Comm w = world();
  int p = w.size(), me = w.rank();
  int to = (me + 1) % p, from = (me + p - 1) % p;
  // Post alternating ANY_SOURCE and specific receives first, then let the sender go: the i-th
  // posted receive must get the i-th message.
  std::vector<Payload> in(kMessages);
  std::vector<Request> recvs(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    int source = i % 3 == 2 ? MPI_ANY_SOURCE : from;  // 0 and 1 go straight to MPI
    int tag = i % 5 == 0 ? MPI_ANY_TAG : kTag;
    REQUIRE(rangecomm::Irecv(&in[i], 1, payload_type(), source, tag, w, &recvs[i]) == MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<Payload> out(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    out[i] = make_payload(2, me, i);
    REQUIRE(rangecomm::Send(&out[i], 1, payload_type(), to, kTag, w) == MPI_SUCCESS);
  }
  std::vector<MPI_Status> st(kMessages);
  REQUIRE(rangecomm::Waitall(kMessages, recvs.data(), st.data()) == MPI_SUCCESS);
  for (int i = 0; i < kMessages; ++i) {
    CHECK(in[i].seq == i);
    CHECK(st[i].MPI_SOURCE == from);
    CHECK(st[i].MPI_TAG == kTag);
  }
}

TEST_CASE("messages to self keep their order and are matched like any other") {
  Comm w = world();
  int me = w.rank();
  std::vector<Payload> out(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    out[i] = make_payload(3, me, i);
    REQUIRE(rangecomm::Send(&out[i], 1, payload_type(), me, kTag, w) == MPI_SUCCESS);
  }
  for (int i = 0; i < kMessages; ++i) {
    Payload got = receive_by(i % kPaths, me, w);
    CHECK(got.seq == i);
    CHECK(got.sender == me);
  }
}
