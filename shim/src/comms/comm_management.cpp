// Questions and settings of a range communicator: rank, size, group, compare, names, info,
// topology queries (a range has none), handle conversion, and a few local calls that only need
// some communicator (MPI_Pack, MPI_Abort).
#include <cstring>
#include <vector>

#include "comms/creation.h"
#include "comms/hints.h"
#include "handles/errors.h"
#include "handles/handles.h"
#include "operations/p2p_support.h"
#include "requests/requests.h"

namespace rcshim {

int range_group(const rangecomm::Comm& range, MPI_Group* out, MPI_Comm base) {
  MPI_Group world;
  int rc = MPI_Comm_group(base, &world);
  if (rc != MPI_SUCCESS) return rc;
  if (range.is_strided_range()) {
    int triple[1][3] = {{range.root_first(),
                         range.root_first() + (range.size() - 1) * range.root_stride(),
                         range.root_stride()}};
    rc = MPI_Group_range_incl(world, 1, triple, out);
  } else {  // a general group: its members one by one
    std::vector<int> members(static_cast<size_t>(range.size()));
    for (int r = 0; r < range.size(); ++r) members[r] = range.rank_in_root(r);
    rc = MPI_Group_incl(world, range.size(), members.data(), out);
  }
  MPI_Group_free(&world);
  return rc;
}

// MPICH 4.0.2 crashes in MPI_Comm_create_group on a duplicate of MPI_COMM_WORLD given a group
// derived from MPI_COMM_WORLD's own group; a group derived from the duplicate's works.
int group_on(MPI_Comm channel, MPI_Group group, MPI_Group* out) {
  MPI_Group base;
  int rc = MPI_Comm_group(channel, &base);
  if (rc != MPI_SUCCESS) return rc;
  int n = 0;
  MPI_Group_size(group, &n);
  std::vector<int> ranks(n), there(n);
  for (int i = 0; i < n; ++i) ranks[i] = i;
  rc = MPI_Group_translate_ranks(group, n, ranks.data(), base, there.data());
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(base, n, there.data(), out);
  MPI_Group_free(&base);
  return rc;
}

namespace {

// Any communicator's group: a range's, or MPI's own for a real one.
int any_group(MPI_Comm comm, MPI_Group* out) {
  if (!rc_is_fake_comm(comm)) return MPI_Comm_group(comm, out);
  FakeComm* c = nullptr;
  if (int rc = fake_range(comm, "MPI_Comm_compare", &c)) return rc;
  return range_group(c->range, out);
}

}  // namespace
}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Comm_rank(MPI_Comm comm, int* rank) {
  RC_FAKE_RANGE("MPI_Comm_rank");
  *rank = range.rank();
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_size(MPI_Comm comm, int* size) {
  RC_FAKE_RANGE("MPI_Comm_size");
  *size = range.size();
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  RC_FAKE_RANGE("MPI_Comm_group");
  if (group == nullptr)
    return raise_error(comm, MPI_ERR_ARG, "MPI_Comm_group: the result argument is a null pointer");
  return result(comm, range_group(range, group));
}

extern "C" int rc_fake_MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  RC_FAKE_RANGE("MPI_Comm_test_inter");
  (void)range;
  *flag = 0;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_remote_size(MPI_Comm comm, int*) {
  RC_FAKE_RANGE("MPI_Comm_remote_size");
  (void)range;
  return raise_error(comm, MPI_ERR_COMM,
                     "MPI_Comm_remote_size: a range communicator is an "
                     "intracommunicator");
}

extern "C" int rc_fake_MPI_Comm_remote_group(MPI_Comm comm, MPI_Group*) {
  RC_FAKE_RANGE("MPI_Comm_remote_group");
  (void)range;
  return raise_error(comm, MPI_ERR_COMM,
                     "MPI_Comm_remote_group: a range communicator is an "
                     "intracommunicator");
}

// MPI_IDENT for the same handle; otherwise the groups decide (CONGRUENT, SIMILAR, UNEQUAL),
// against real communicators too.
extern "C" int rc_fake_MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result_out) {
  MPI_Comm culprit = rc_is_fake_comm(comm1) ? comm1 : comm2;
  if (comm1 == comm2) {
    FakeComm* c = nullptr;
    if (int rc = get_comm(comm1, "MPI_Comm_compare", &c)) return rc;
    *result_out = MPI_IDENT;
    return MPI_SUCCESS;
  }
  for (MPI_Comm c : {comm1, comm2}) {
    int inter = 0;
    if (!rc_is_fake_comm(c) && c != MPI_COMM_NULL &&
        MPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && inter) {
      *result_out = MPI_UNEQUAL;
      return MPI_SUCCESS;
    }
  }
  MPI_Group g1 = MPI_GROUP_NULL, g2 = MPI_GROUP_NULL;
  int rc = any_group(comm1, &g1);
  if (rc == MPI_SUCCESS) rc = any_group(comm2, &g2);
  int cmp = MPI_UNEQUAL;
  if (rc == MPI_SUCCESS) rc = MPI_Group_compare(g1, g2, &cmp);
  if (g1 != MPI_GROUP_NULL) MPI_Group_free(&g1);
  if (g2 != MPI_GROUP_NULL) MPI_Group_free(&g2);
  if (rc != MPI_SUCCESS) return raise_on(culprit, rc);
  *result_out = cmp == MPI_IDENT ? MPI_CONGRUENT : cmp;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_get_name", &c)) return rc;
  std::snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name.c_str());
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_set_name(MPI_Comm comm, const char* name) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_set_name", &c)) return rc;
  if (name == nullptr) return raise_error(comm, MPI_ERR_ARG, "MPI_Comm_set_name: name is NULL");
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

// The hints in use (a copy the program frees), as MPI returns them (hints.cpp).
extern "C" int rc_fake_MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_get_info", &c)) return rc;
  return result(comm, hints_in_use(*c, info_used));
}

extern "C" int rc_fake_MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_set_info", &c)) return rc;
  if (info == MPI_INFO_NULL)
    return raise_error(comm, MPI_ERR_INFO, "MPI_Comm_set_info: MPI_INFO_NULL");
  return result(comm, apply_hints(*c, info));
}

// A range never has a topology: MPI_Topo_test says so, and the topology queries fail the way
// MPI fails them on a communicator without one.
extern "C" int rc_fake_MPI_Topo_test(MPI_Comm comm, int* status) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Topo_test", &c)) return rc;
  *status = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

namespace {
int no_topology(MPI_Comm comm, const char* fn) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, fn, &c)) return rc;
  return raise_error(comm, MPI_ERR_TOPOLOGY, "%s: a range communicator has no topology", fn);
}
}  // namespace

extern "C" int rc_fake_MPI_Cartdim_get(MPI_Comm comm, int*) {
  return no_topology(comm, "MPI_Cartdim_get");
}
extern "C" int rc_fake_MPI_Cart_get(MPI_Comm comm, int, int[], int[], int[]) {
  return no_topology(comm, "MPI_Cart_get");
}
extern "C" int rc_fake_MPI_Cart_rank(MPI_Comm comm, const int[], int*) {
  return no_topology(comm, "MPI_Cart_rank");
}
extern "C" int rc_fake_MPI_Cart_coords(MPI_Comm comm, int, int, int[]) {
  return no_topology(comm, "MPI_Cart_coords");
}
extern "C" int rc_fake_MPI_Cart_shift(MPI_Comm comm, int, int, int*, int*) {
  return no_topology(comm, "MPI_Cart_shift");
}
extern "C" int rc_fake_MPI_Graphdims_get(MPI_Comm comm, int*, int*) {
  return no_topology(comm, "MPI_Graphdims_get");
}
extern "C" int rc_fake_MPI_Graph_get(MPI_Comm comm, int, int, int[], int[]) {
  return no_topology(comm, "MPI_Graph_get");
}
extern "C" int rc_fake_MPI_Graph_neighbors_count(MPI_Comm comm, int, int*) {
  return no_topology(comm, "MPI_Graph_neighbors_count");
}
extern "C" int rc_fake_MPI_Graph_neighbors(MPI_Comm comm, int, int, int[]) {
  return no_topology(comm, "MPI_Graph_neighbors");
}
extern "C" int rc_fake_MPI_Dist_graph_neighbors_count(MPI_Comm comm, int*, int*, int*) {
  return no_topology(comm, "MPI_Dist_graph_neighbors_count");
}
extern "C" int rc_fake_MPI_Dist_graph_neighbors(MPI_Comm comm, int, int[], int[], int, int[],
                                                int[]) {
  return no_topology(comm, "MPI_Dist_graph_neighbors");
}

extern "C" int rc_fake_MPI_Cart_sub(MPI_Comm comm, const int[], MPI_Comm*) {
  return no_topology(comm, "MPI_Cart_sub");
}

// Local: where a process would go in a Cartesian grid (ranks in row-major order, as MPI does
// without reordering), so no real communicator is needed.
extern "C" int rc_fake_MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int[],
                                    int* newrank) {
  RC_FAKE_RANGE("MPI_Cart_map");
  long long cells = 1;
  for (int i = 0; i < ndims; ++i) cells *= dims[i];
  if (cells > range.size())
    return raise_error(comm, MPI_ERR_DIMS,
                       "MPI_Cart_map: the grid has %lld cells, more than the "
                       "%d processes",
                       cells, range.size());
  *newrank = range.rank() < cells ? range.rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Graph_map(MPI_Comm comm, int nnodes, const int[], const int[],
                                     int* newrank) {
  RC_FAKE_RANGE("MPI_Graph_map");
  if (nnodes > range.size())
    return raise_error(comm, MPI_ERR_ARG, "MPI_Graph_map: %d nodes, more than the %d processes",
                       nnodes, range.size());
  *newrank = range.rank() < nnodes ? range.rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// Packing only asks the communicator about data representation, the same for every process.
extern "C" int rc_fake_MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                                int outsize, int* position, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Pack");
  (void)range;
  return result(comm,
                MPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, MPI_COMM_WORLD));
}

extern "C" int rc_fake_MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                                  int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  RC_FAKE_RANGE("MPI_Unpack");
  (void)range;
  return result(comm,
                MPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, MPI_COMM_WORLD));
}

extern "C" int rc_fake_MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  RC_FAKE_RANGE("MPI_Pack_size");
  (void)range;
  return result(comm, MPI_Pack_size(incount, datatype, MPI_COMM_WORLD, size));
}

// MPI aborts "all tasks in the group of comm" at best; like MPI implementations, all of them.
extern "C" int rc_fake_MPI_Abort(MPI_Comm, int errorcode) {
  return MPI_Abort(MPI_COMM_WORLD, errorcode);
}

// Fortran handles of library objects (fake_handles.h): on Open MPI RC_FAKE_FORTRAN + index; on
// MPICH the C handles themselves (its Fortran bindings cast them back; MPICH 4.1 made the
// conversions functions, 4.0 had casts).
#if defined(OPEN_MPI)
#define RC_FORTRAN_CONVERSIONS(Type, type)                                                       \
  extern "C" int rc_fake_MPI_##Type##_c2f(MPI_##Type handle) {                                   \
    return rc_fake_fortran_handle(rc_fake_##type##_index(handle));                               \
  }                                                                                              \
  extern "C" MPI_##Type rc_hand_MPI_##Type##_f2c(MPI_Fint handle) {                              \
    if (rc_is_fake_fortran(handle))                                                              \
      return rc_fake_##type##_handle(static_cast<std::uint32_t>(handle & RC_FAKE_FORTRAN_MASK)); \
    return MPI_##Type##_f2c(handle);                                                             \
  }
#else
#define RC_FORTRAN_CONVERSIONS(Type, type)                            \
  extern "C" int rc_fake_MPI_##Type##_c2f(MPI_##Type handle) {        \
    return static_cast<MPI_Fint>(handle);                             \
  }                                                                   \
  extern "C" MPI_##Type rc_hand_MPI_##Type##_f2c(MPI_Fint handle) {   \
    MPI_##Type as_c = static_cast<MPI_##Type>(handle);                \
    return rc_is_fake_##type(as_c) ? as_c : MPI_##Type##_f2c(handle); \
  }
#endif
RC_FORTRAN_CONVERSIONS(Comm, comm)
RC_FORTRAN_CONVERSIONS(Request, request)
RC_FORTRAN_CONVERSIONS(Message, message)
#undef RC_FORTRAN_CONVERSIONS
