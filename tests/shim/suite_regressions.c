/* What MPICH's test suite (tools/mpich-testsuite.sh) found the acceleration modes doing unlike
 * MPI, as an ordinary program on real communicators: run natively and under RANGECOMM_MODE=
 * accelerate and shadow, every result must be MPI's.
 * - A dup of a communicator with a topology keeps it (attr/..., topo/topodup, topo/distgraph1).
 * - An attribute whose keyval the program freed while a communicator still held it is copied
 *   by a dup of that communicator with the keyval's copy callback (attr/fkeyval).
 * - A null result pointer is an MPI_ERR_ARG error of the call, not a write through it
 *   (errors/comm/comm_*_nullarg; MPICH only: Open MPI 4.1 writes through some of them).
 * - MPICH's MPI_Comm_split_type(MPIX_COMM_TYPE_NEIGHBORHOOD) with the hint nbhd_common_dirname
 *   gives a communicator of the processes that see the directory (comm/cmsplit_type): MPICH
 *   runs ROMIO there, whose MPI_Comm_split, dup and create must make MPI's communicators. */
#include "shim_check.h"

static int copies = 0;

static int count_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm, (void)keyval, (void)extra;
  ++copies;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void check_topologies(int p) {
  MPI_Comm cart, graph, copy;
  int dims[1] = {p}, periods[1] = {0}, kind = MPI_UNDEFINED;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
  CHECK_MPI(MPI_Comm_dup(cart, &copy));
  CHECK_MPI(MPI_Topo_test(copy, &kind));
  CHECK(kind == MPI_CART, "dup of a Cartesian communicator has topology %d", kind);
  {
    int ndims = 0, cdims[1], cperiods[1], coords[1];
    CHECK_MPI(MPI_Cartdim_get(copy, &ndims));
    CHECK_MPI(MPI_Cart_get(copy, 1, cdims, cperiods, coords));
    CHECK(ndims == 1 && cdims[0] == p, "dup's grid %d: %d", ndims, cdims[0]);
  }
  CHECK_MPI(MPI_Comm_free(&copy));
  CHECK_MPI(MPI_Comm_dup_with_info(cart, MPI_INFO_NULL, &copy));
  CHECK_MPI(MPI_Topo_test(copy, &kind));
  CHECK(kind == MPI_CART, "dup_with_info of a Cartesian communicator has topology %d", kind);
  CHECK_MPI(MPI_Comm_free(&copy));
  {
    MPI_Request request;
    CHECK_MPI(MPI_Comm_idup(cart, &copy, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Topo_test(copy, &kind));
    CHECK(kind == MPI_CART, "idup of a Cartesian communicator has topology %d", kind);
    CHECK_MPI(MPI_Comm_free(&copy));
  }
  CHECK_MPI(MPI_Comm_free(&cart));

  {
    int r, source, dest, weight = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    source = (r + p - 1) % p, dest = (r + 1) % p;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &source, &weight, 1, &dest, &weight,
                                             MPI_INFO_NULL, 0, &graph));
  }
  CHECK_MPI(MPI_Comm_dup(graph, &copy));
  CHECK_MPI(MPI_Topo_test(copy, &kind));
  CHECK(kind == MPI_DIST_GRAPH, "dup of a distributed graph communicator has topology %d", kind);
  CHECK_MPI(MPI_Comm_free(&copy));
  CHECK_MPI(MPI_Comm_free(&graph));
  note("dups keep topologies");
}

static void check_freed_keyval(void) {
  MPI_Comm parent, copy;
  int keyval, saved, value = 7, flag = 0;
  void *got = NULL;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent)); /* (a library one under acceleration) */
  /* on the world and on a communicator of the library */
  MPI_Comm parents[2] = {MPI_COMM_WORLD, parent};
  for (int i = 0; i < 2; ++i) {
    copies = 0;
    CHECK_MPI(MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    saved = keyval;
    CHECK_MPI(MPI_Comm_set_attr(parents[i], keyval, &value));
    CHECK_MPI(MPI_Comm_free_keyval(&keyval));
    CHECK(keyval == MPI_KEYVAL_INVALID, "freed keyval is %d", keyval);
    CHECK_MPI(MPI_Comm_dup(parents[i], &copy));
    CHECK(copies == 1, "copy callback of a freed keyval ran %d times on dup %d", copies, i);
    CHECK_MPI(MPI_Comm_get_attr(copy, saved, &got, &flag));
    CHECK(flag && got == &value, "the dup's attribute: flag %d", flag);
    CHECK_MPI(MPI_Comm_free(&copy));
    CHECK_MPI(MPI_Comm_delete_attr(parents[i], saved));
  }
  CHECK_MPI(MPI_Comm_free(&parent));
  note("freed keyvals still copied");
}

#ifdef MPICH_VERSION
static void check_null_results(void) {
  MPI_Comm parent;
  MPI_Group group;
  int cls = MPI_SUCCESS;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
  CHECK_MPI(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_group(parent, &group));
  MPI_Comm comms[2] = {MPI_COMM_WORLD, parent};
  for (int i = 0; i < 2; ++i) {
    int rc[5];
    rc[0] = MPI_Comm_dup(comms[i], NULL);
    rc[1] = MPI_Comm_split(comms[i], 0, 0, NULL);
    rc[2] = MPI_Comm_create(comms[i], group, NULL);
    rc[3] = MPI_Comm_create_group(comms[i], group, 5, NULL);
    rc[4] = MPI_Comm_group(comms[i], NULL);
    for (int k = 0; k < 5; ++k) {
      MPI_Error_class(rc[k], &cls);
      CHECK(rc[k] != MPI_SUCCESS && cls == MPI_ERR_ARG,
            "call %d with a null result on communicator %d: class %d", k, i, cls);
    }
  }
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Group_free(&group));
  CHECK_MPI(MPI_Comm_free(&parent));
  note("null results are MPI_ERR_ARG");
}
#endif

#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
static void check_neighborhood_split(int p) {
  MPI_Comm parent, comm;
  MPI_Info info;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent)); /* (a library one under acceleration) */
  CHECK_MPI(MPI_Info_create(&info));
  CHECK_MPI(MPI_Info_set(info, "nbhd_common_dirname", "."));
  MPI_Comm parents[2] = {MPI_COMM_WORLD, parent};
  for (int i = 0; i < 2; ++i) {
    int size = 0, sum = 0, one = 1;
    CHECK_MPI(MPI_Comm_split_type(parents[i], MPIX_COMM_TYPE_NEIGHBORHOOD, 0, info, &comm));
    CHECK(comm != MPI_COMM_NULL, "neighbourhood split of parent %d is MPI_COMM_NULL", i);
    if (comm == MPI_COMM_NULL) continue;
    CHECK_MPI(MPI_Comm_size(comm, &size));
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(size == p && sum == p, "neighbourhood split of parent %d: size %d, sum %d", i, size, sum);
    CHECK_MPI(MPI_Comm_free(&comm));
  }
  CHECK_MPI(MPI_Info_free(&info));
  CHECK_MPI(MPI_Comm_free(&parent));
  note("neighbourhood splits by directory");
}
#endif

int main(int argc, char **argv) {
  int p;
  MPI_Init(&argc, &argv);
  shim_test_begin();
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  check_topologies(p);
  check_freed_keyval();
#ifdef MPICH_VERSION
  check_null_results();
#endif
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
  check_neighborhood_split(p);
#endif
  shim_test_end();
  MPI_Finalize();
  return 0;
}
