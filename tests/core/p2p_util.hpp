// Shared helpers of the point-to-point tests: payloads that say where they came from.
#pragma once

#include <rangecomm/rangecomm.hpp>

#include <vector>

#include "mpi_test.hpp"

namespace p2ptest {

// What every test message carries, so a receiver can tell a misdelivered message.
struct Payload {
  int comm_id;  // which communicator the sender used
  int sender;   // sender's rank in that communicator
  int seq;      // per (sender, receiver, tag) sequence number
  int check;    // comm_id * 7919 + sender * 31 + seq
};

inline Payload make_payload(int comm_id, int sender, int seq) {
  return {comm_id, sender, seq, comm_id * 7919 + sender * 31 + seq};
}

inline bool intact(const Payload& p) { return p.check == p.comm_id * 7919 + p.sender * 31 + p.seq; }

inline MPI_Datatype payload_type() {
  static MPI_Datatype t = [] {
    MPI_Datatype d;
    MPI_Type_contiguous(4, MPI_INT, &d);
    MPI_Type_commit(&d);
    return mpitest::free_at_finalize(d);
  }();
  return t;
}

inline rangecomm::Comm world() {
  rangecomm::Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

inline int error_class(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

inline int count_of(const MPI_Status& st, MPI_Datatype t) {
  int n = -1;
  MPI_Get_count(&st, t, &n);
  return n;
}

}  // namespace p2ptest
