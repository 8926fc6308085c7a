// Non-overtaking: messages with the same (source, tag) arrive in send order on every path.
#include <algorithm>

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

// A message that ends inside an element of the receive type fills that element's leading basic
// elements (MPI_Get_count is then MPI_UNDEFINED); a message to self must do so too, on every
// receive path, as MPI itself does on MPI_COMM_SELF. 7 shorts into contig(4, short) elements
// of a resized type with gaps, and 2 shorts into the first element only.
TEST_CASE("a message to self that ends inside an element fills its leading basic elements") {
  Comm w = world();
  int me = w.rank();
  MPI_Datatype four, gapped;
  MPI_Type_contiguous(4, MPI_SHORT, &four);
  MPI_Type_create_resized(four, -4, 16, &gapped);  // 4 bytes before, 4 after each element
  MPI_Type_commit(&gapped);
  short data[8] = {11, 12, 13, 14, 15, 16, 17, 18};
  for (int n : {7, 2}) {
    for (int path = 0; path < 4; ++path) {
      short native[24], range[24];
      std::fill(native, native + 24, -1);
      std::fill(range, range + 24, -1);
      MPI_Status st, nst;
      REQUIRE(MPI_Sendrecv(data, n, MPI_SHORT, 0, 5, native + 2, 2, gapped, 0, 5, MPI_COMM_SELF,
                           &nst) == MPI_SUCCESS);
      Request send;
      REQUIRE(rangecomm::Isend(data, n, MPI_SHORT, me, 5, w, &send) == MPI_SUCCESS);
      if (path == 0) {
        REQUIRE(rangecomm::Recv(range + 2, 2, gapped, me, 5, w, &st) == MPI_SUCCESS);
      } else if (path == 1) {
        Request r;
        REQUIRE(rangecomm::Irecv(range + 2, 2, gapped, me, 5, w, &r) == MPI_SUCCESS);
        REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
      } else {
        Message m;
        REQUIRE(rangecomm::Mprobe(me, 5, w, &m, &st) == MPI_SUCCESS);
        if (path == 2) {
          REQUIRE(rangecomm::Mrecv(range + 2, 2, gapped, &m, &st) == MPI_SUCCESS);
        } else {
          Request r;
          REQUIRE(rangecomm::Imrecv(range + 2, 2, gapped, &m, &r) == MPI_SUCCESS);
          REQUIRE(rangecomm::Wait(&r, &st) == MPI_SUCCESS);
        }
      }
      REQUIRE(rangecomm::Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      INFO("shorts " << n << ", receive path " << path);
      CHECK(std::vector<short>(range, range + 24) == std::vector<short>(native, native + 24));
      int elements = -1, native_elements = -2;
      MPI_Get_elements(&st, gapped, &elements);
      MPI_Get_elements(&nst, gapped, &native_elements);
      CHECK(elements == n);
      CHECK(elements == native_elements);
      CHECK(count_of(st, gapped) == MPI_UNDEFINED);
    }
  }
  MPI_Type_free(&gapped);
  MPI_Type_free(&four);
}
