// MPI_BOTTOM with absolute-address datatypes (as language bindings pass arbitrary memory): the
// own block of Gather, Allgather, Alltoallw, and messages to self, against native MPI on the
// same arguments.
#include <rangecomm/rangecomm.hpp>

#include <cstdint>
#include <vector>

#include "mpi_test.hpp"

namespace {

// A type of one int at the absolute address of base[0], whose i-th element (extent one int) is
// base[i]: with MPI_BOTTOM as the buffer it names base's memory.
MPI_Datatype absolute_ints(int* base) {
  MPI_Aint at = 0;
  MPI_Get_address(base, &at);
  int one = 1;
  MPI_Datatype in = MPI_INT, st = MPI_DATATYPE_NULL, out = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(1, &one, &at, &in, &st);
  MPI_Type_create_resized(st, at, sizeof(int), &out);
  MPI_Type_free(&st);
  MPI_Type_commit(&out);
  return out;
}

struct Native {
  MPI_Comm comm = MPI_COMM_NULL;
  Native() { MPI_Comm_dup(MPI_COMM_WORLD, &comm); }
  ~Native() { MPI_Comm_free(&comm); }
};

rangecomm::Comm world() {
  rangecomm::Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

}  // namespace

TEST_CASE("Gather and Allgather from and into MPI_BOTTOM with absolute-address types") {
  auto w = world();
  Native native;
  const int p = w.size(), r = w.rank();
  for (bool nonblocking : {false, true}) {
    for (int root = 0; root < p; ++root) {
      int mine = 100 * r + root;
      std::vector<int> range_out(p, -1), native_out(p, -1);
      MPI_Datatype send = absolute_ints(&mine);
      MPI_Datatype range_recv = absolute_ints(range_out.data());
      MPI_Datatype native_recv = absolute_ints(native_out.data());
      if (nonblocking) {
        rangecomm::Request q;
        REQUIRE(rangecomm::Igather(MPI_BOTTOM, 1, send, MPI_BOTTOM, 1, range_recv, root, w, &q) ==
                MPI_SUCCESS);
        REQUIRE(rangecomm::Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      } else {
        REQUIRE(rangecomm::Gather(MPI_BOTTOM, 1, send, MPI_BOTTOM, 1, range_recv, root, w) ==
                MPI_SUCCESS);
      }
      REQUIRE(MPI_Gather(MPI_BOTTOM, 1, send, MPI_BOTTOM, 1, native_recv, root, native.comm) ==
              MPI_SUCCESS);
      if (r == root) CHECK(range_out == native_out);
      std::fill(range_out.begin(), range_out.end(), -1);
      std::fill(native_out.begin(), native_out.end(), -1);
      REQUIRE(rangecomm::Allgather(MPI_BOTTOM, 1, send, MPI_BOTTOM, 1, range_recv, w) ==
              MPI_SUCCESS);
      REQUIRE(MPI_Allgather(MPI_BOTTOM, 1, send, MPI_BOTTOM, 1, native_recv, native.comm) ==
              MPI_SUCCESS);
      CHECK(range_out == native_out);
      for (MPI_Datatype* t : {&send, &range_recv, &native_recv}) MPI_Type_free(t);
    }
  }
}

TEST_CASE("Alltoallw with a different absolute-address type per peer and MPI_BOTTOM") {
  auto w = world();
  Native native;
  const int p = w.size(), r = w.rank();
  std::vector<int> in(p), range_out(p, -1), native_out(p, -1);
  for (int j = 0; j < p; ++j) in[j] = 1000 * r + j;
  std::vector<MPI_Datatype> send(p), range_recv(p), native_recv(p);
  for (int j = 0; j < p; ++j) {
    send[j] = absolute_ints(&in[j]);
    range_recv[j] = absolute_ints(&range_out[j]);
    native_recv[j] = absolute_ints(&native_out[j]);
  }
  std::vector<int> ones(p, 1), zeros(p, 0);
  REQUIRE(rangecomm::Alltoallw(MPI_BOTTOM, ones.data(), zeros.data(), send.data(), MPI_BOTTOM,
                               ones.data(), zeros.data(), range_recv.data(), w) == MPI_SUCCESS);
  REQUIRE(MPI_Alltoallw(MPI_BOTTOM, ones.data(), zeros.data(), send.data(), MPI_BOTTOM, ones.data(),
                        zeros.data(), native_recv.data(), native.comm) == MPI_SUCCESS);
  CHECK(range_out == native_out);
  for (int j = 0; j < p; ++j)
    for (MPI_Datatype* t : {&send[j], &range_recv[j], &native_recv[j]}) MPI_Type_free(t);
}

TEST_CASE("a message to self from and into MPI_BOTTOM") {
  auto w = world();
  int out = 42 + w.rank(), in = -1;
  MPI_Datatype send = absolute_ints(&out), recv = absolute_ints(&in);
  rangecomm::Request q;
  REQUIRE(rangecomm::Isend(MPI_BOTTOM, 1, send, w.rank(), 3, w, &q) == MPI_SUCCESS);
  MPI_Status st;
  REQUIRE(rangecomm::Recv(MPI_BOTTOM, 1, recv, w.rank(), 3, w, &st) == MPI_SUCCESS);
  REQUIRE(rangecomm::Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(in == out);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 1);
  MPI_Type_free(&send);
  MPI_Type_free(&recv);
}

namespace {

// A user sum of ints: predefined operations take predefined types only, and an absolute-address
// type is a derived one. MPI hands it elements of the type, whose data lies at the true lower
// bound of each.
void add_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(*type, &lb, &extent);
  MPI_Type_get_true_extent(*type, &true_lb, &true_extent);
  for (int i = 0; i < *len; ++i) {
    auto a = reinterpret_cast<const int*>(reinterpret_cast<uintptr_t>(in) + i * extent + true_lb);
    auto b = reinterpret_cast<int*>(reinterpret_cast<uintptr_t>(inout) + i * extent + true_lb);
    *b += *a;
  }
}

}  // namespace

// The reductions keep partial results in scratch blocks of the call's type; for an
// absolute-address type the block's address minus the type's true lower bound (an address)
// must not be computed as pointer arithmetic, which wraps (UndefinedBehaviorSanitizer).
TEST_CASE("in-place reductions into MPI_BOTTOM with an absolute-address type and a user op") {
  auto w = world();
  const int p = w.size(), r = w.rank();
  MPI_Op sum;
  MPI_Op_create(add_ints, 1, &sum);
  const int per = 300;  // elements per process: long enough for the halving algorithms
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<int> data(per * p);
    for (int i = 0; i < per * p; ++i) data[i] = 1000 * r + i;
    MPI_Datatype type = absolute_ints(data.data());
    int rc = MPI_SUCCESS;
    if (kind == 0) rc = rangecomm::Allreduce(MPI_IN_PLACE, MPI_BOTTOM, per * p, type, sum, w);
    if (kind == 1)
      rc = rangecomm::Reduce_scatter_block(MPI_IN_PLACE, MPI_BOTTOM, per, type, sum, w);
    if (kind == 2) {
      rangecomm::Request q;
      rc = rangecomm::Ireduce_scatter_block(MPI_IN_PLACE, MPI_BOTTOM, per, type, sum, w, &q);
      if (rc == MPI_SUCCESS) rc = rangecomm::Wait(&q, MPI_STATUS_IGNORE);
    }
    REQUIRE(rc == MPI_SUCCESS);
    // Allreduce: every element; Reduce_scatter_block: this process's block, at the start
    const int n = kind == 0 ? per * p : per, first = kind == 0 ? 0 : per * r;
    for (int i = 0; i < n; ++i) {
      int want = 0;
      for (int k = 0; k < p; ++k) want += 1000 * k + first + i;
      INFO("kind " << kind << ", element " << i);
      REQUIRE(data[i] == want);
    }
    MPI_Type_free(&type);
  }
  MPI_Op_free(&sum);
}
