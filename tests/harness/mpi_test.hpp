// Helpers for test cases run by the MPI-aware Catch2 main (mpi_catch_main.cpp).
//
// Every rank runs every TEST_CASE, in the same order. A failure on any rank fails the case on
// all ranks, and rank 0 prints the failure text of the other ranks prefixed with "[rank k]".
// MPI_COMM_WORLD has MPI_ERRORS_RETURN, so MPI calls return error codes instead of aborting.
//
// Beware of REQUIRE before a collective: a rank that fails it leaves the test case while the
// others wait in the collective, and the test hangs until its timeout. Use CHECK there, or
// agree first: REQUIRE(mpitest::all_ranks(ok)).
#pragma once

#include <mpi.h>
#include "catch.hpp"

namespace mpitest {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// Collective over MPI_COMM_WORLD: true when `local` is true on every rank.
inline bool all_ranks(bool local) {
  int in = local ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}

// Collective over MPI_COMM_WORLD: true when `local` is true on at least one rank.
inline bool any_rank(bool local) {
  int in = local ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return out != 0;
}

// Frees a datatype kept in a static when MPI_Finalize runs (MPI_COMM_SELF's attributes are
// deleted first), so MPI's leak checks see nothing of the tests' own.
inline MPI_Datatype free_at_finalize(MPI_Datatype type) {
  int keyval = MPI_KEYVAL_INVALID;
  auto drop = [](MPI_Comm, int key, void* value, void*) -> int {
    auto* t = static_cast<MPI_Datatype*>(value);
    MPI_Type_free(t);
    delete t;
    MPI_Comm_free_keyval(&key);
    return MPI_SUCCESS;
  };
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop, &keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, new MPI_Datatype(type));
  return type;
}

}  // namespace mpitest

// CHECK that an MPI call returned MPI_SUCCESS; the failing call is shown in the message.
#define CHECK_MPI(call) CHECK((call) == MPI_SUCCESS)
