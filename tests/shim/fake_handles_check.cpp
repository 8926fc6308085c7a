// The fake-handle encodings (shim/src/base/fake_handles.h): no handle the MPI library makes is
// taken for a fake one, index <-> handle round trips, the kinds do not overlap, and on Open MPI the
// region is reserved PROT_NONE at the fixed address; on MPICH a fake handle that reaches the real
// library is answered with an error, not a crash. On Open MPI the program is linked with
// librangecomm.so (whose start-up maps the region); on MPICH it is not, so that its MPI calls
// reach MPICH itself. Exits nonzero on the first failure (MPI_Abort: no rank hangs).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/fake_handles.h"

#define EXPECT(cond)                                                                 \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #cond); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    }                                                                                \
  } while (0)

namespace {

void check_predefined() {
  EXPECT(!rc_is_fake_comm(MPI_COMM_WORLD) && !rc_is_fake_comm(MPI_COMM_SELF));
  EXPECT(!rc_is_fake_comm(MPI_COMM_NULL));
  EXPECT(!rc_is_fake_request(MPI_REQUEST_NULL));
  EXPECT(!rc_is_fake_message(MPI_MESSAGE_NULL) && !rc_is_fake_message(MPI_MESSAGE_NO_PROC));
}

template <typename H>
void check_round_trip(H (*handle)(uint32_t), uint32_t (*index)(H), bool (*is_fake)(H),
                      uint32_t limit) {
  const uint32_t indices[] = {1, 2, 3, 1000, 12345, limit / 2, limit - 2, limit - 1};
  for (uint32_t idx : indices) {
    H h = handle(idx);
    EXPECT(is_fake(h));
    EXPECT(index(h) == idx);
  }
  EXPECT(!is_fake(handle(0)));      // index 0 is never handed out
  EXPECT(!is_fake(handle(limit)));  // the first value past the kind's range
}

// Handles of one kind are never taken for another kind.
void check_kinds_apart() {
  for (uint32_t idx : {1u, 77u, RC_FAKE_REQUEST_INDEX_LIMIT - 1}) {
    MPI_Comm c = rc_fake_comm_handle(idx);
    MPI_Request r = rc_fake_request_handle(idx);
    MPI_Message m = rc_fake_message_handle(idx);
    MPI_Request c_as_r, m_as_r;
    MPI_Message r_as_m;
    std::memcpy(&c_as_r, &c, sizeof c_as_r);
    std::memcpy(&m_as_r, &m, sizeof m_as_r);
    std::memcpy(&r_as_m, &r, sizeof r_as_m);
    EXPECT(!rc_is_fake_request(c_as_r) && !rc_is_fake_request(m_as_r));
    EXPECT(!rc_is_fake_message(r_as_m));
  }
}

// Many live handles of every kind the library makes: none is fake.
void check_real_handles() {
  std::vector<MPI_Comm> comms(100);
  for (MPI_Comm& c : comms) {
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, &c) == MPI_SUCCESS);
    EXPECT(!rc_is_fake_comm(c));
  }
  std::vector<int> in(400), out(400);
  std::vector<MPI_Request> reqs(800);
  for (int i = 0; i < 400; ++i) {
    EXPECT(MPI_Irecv(&in[i], 1, MPI_INT, 0, i, MPI_COMM_SELF, &reqs[i]) == MPI_SUCCESS);
    EXPECT(MPI_Isend(&out[i], 1, MPI_INT, 0, i, MPI_COMM_SELF, &reqs[400 + i]) == MPI_SUCCESS);
  }
  for (MPI_Request r : reqs) EXPECT(!rc_is_fake_request(r));
  EXPECT(MPI_Waitall(800, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  int v = 1, got = 0;
  MPI_Message msg;
  EXPECT(MPI_Send(&v, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF) == MPI_SUCCESS);
  MPI_Request self_send;
  EXPECT(MPI_Isend(&v, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &self_send) == MPI_SUCCESS);
  EXPECT(MPI_Mprobe(0, 5, MPI_COMM_SELF, &msg, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  EXPECT(!rc_is_fake_message(msg));
  EXPECT(MPI_Mrecv(&got, 1, MPI_INT, &msg, MPI_STATUS_IGNORE) == MPI_SUCCESS && got == 1);
  EXPECT(MPI_Wait(&self_send, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (MPI_Comm& c : comms) EXPECT(MPI_Comm_free(&c) == MPI_SUCCESS);
}

#if defined(OPEN_MPI)
// The region is ours: mapped PROT_NONE at the fixed address, 3 parts long.
void check_region() {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  EXPECT(maps != nullptr);
  char line[512];
  bool found = false;
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long long lo = 0, hi = 0;
    char perms[8] = "";
    if (std::sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3) continue;
    if (lo <= RC_FAKE_BASE_FIXED && RC_FAKE_BASE_FIXED + RC_FAKE_REGION_BYTES <= hi) {
      found = std::strncmp(perms, "---", 3) == 0;
    }
  }
  std::fclose(maps);
  EXPECT(found);
}
#else
// A fake communicator that reaches MPICH itself is an invalid handle there: an error, no crash.
void check_leak_is_an_error() {
  int rank = -1, cls = MPI_SUCCESS;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int err = MPI_Comm_rank(rc_fake_comm_handle(12345), &rank);  // MPICH's own: no shim here
  EXPECT(err != MPI_SUCCESS);
  MPI_Error_class(err, &cls);
  EXPECT(cls == MPI_ERR_COMM);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  check_predefined();
  check_round_trip(rc_fake_comm_handle, rc_fake_comm_index, rc_is_fake_comm,
                   RC_FAKE_COMM_INDEX_LIMIT);
  check_round_trip(rc_fake_request_handle, rc_fake_request_index, rc_is_fake_request,
                   RC_FAKE_REQUEST_INDEX_LIMIT);
  check_round_trip(rc_fake_message_handle, rc_fake_message_index, rc_is_fake_message,
                   RC_FAKE_MESSAGE_INDEX_LIMIT);
  check_kinds_apart();
  check_real_handles();
#if defined(OPEN_MPI)
  check_region();
#else
  check_leak_is_an_error();
#endif
  std::printf("fake handles: all checks passed\n");
  MPI_Finalize();
  return 0;
}
