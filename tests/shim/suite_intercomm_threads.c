/* What MPICH's test suite found the acceleration modes doing unlike MPI with threads
 * (threads/comm/idup_comm_gen), as an ordinary program: several threads at once each make an
 * intercommunicator with MPI_Intercomm_create over a peer communicator of their own (a dup of
 * MPI_COMM_WORLD, a library one under RANGECOMM_MODE=accelerate and shadow), all with the same
 * tag, as MPI allows because the peers differ. Each thread's leaders must meet only each other:
 * a message across each intercommunicator carries its thread's number, and the merge of each
 * (and a dup of the merge) gives its own members. The merges (under shadow) and their dups
 * (under accelerate) are named by an all-reduction over MPI's merge in each thread at once, which
 * must not hold the library lock. Open MPI 4.1 lets the context-id agreements running at once in
 * a process proceed in the order of their local communicators' context ids, so the real halves
 * the library gives MPI_Intercomm_create must be ordered alike on both sides (fallback.cpp,
 * joint_intercomm); made separately for each side, they hung here. The threads of a process free
 * their intercommunicators while none of them is making a communicator (a barrier before and
 * after): Open MPI 4.1 gives an intercommunicator whose context id is below its local
 * communicator's an extra reference, and freeing it then frees whatever communicator another
 * thread's creation put at that id meanwhile (native_defects intercomm-free, plain MPI), which
 * ended this test in a SEGV now and then. Run natively and under the library in each mode, on
 * both MPIs. With `anytime` the threads free their intercommunicators without the barriers, as
 * MPICH's test does: the form that meets Open MPI's defect (docs/reliability.md measures how
 * often, natively and under the library).
 *
 *   suite_intercomm_threads [rounds [anytime]]   (default 5 rounds, barriers) */
#include "shim_check.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>

enum { kThreads = 4, kTag = 99 };

static int rank, size, rounds = 5, anytime = 0;
static MPI_Comm peers[kThreads];
static pthread_barrier_t no_creation; /* around the threads' MPI_Comm_free of intercommunicators */

static void *make_intercomm(void *arg) {
  const int thread = *(const int *)arg;
  MPI_Comm peer = peers[thread], local, inter, merged, copy;
  const int left = rank < size / 2;
  const int remote_leader = left ? size / 2 : 0;
  for (int round = 0; round < rounds; ++round) {
    int remote_size = 0, got = -1, sum = 0, one = 1, merged_size = 0;
    CHECK_MPI(MPI_Comm_split(peer, left, rank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, peer, remote_leader, kTag, &inter));
    CHECK_MPI(MPI_Comm_remote_size(inter, &remote_size));
    CHECK(remote_size == (left ? size - size / 2 : size / 2),
          "thread %d: remote group of %d processes", thread, remote_size);
    /* Local rank 0 of each side sends its thread's number to the other side's rank 0. */
    if (rank == 0 || rank == size / 2) {
      const int mine = 100 * thread + round;
      CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_INT, 0, round, &got, 1, MPI_INT, 0, round, inter,
                             MPI_STATUS_IGNORE));
      CHECK(got == mine, "thread %d, round %d: the intercommunicator brought %d", thread, round,
            got);
    }
    CHECK_MPI(MPI_Intercomm_merge(inter, !left, &merged));
    CHECK_MPI(MPI_Comm_size(merged, &merged_size));
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(merged_size == size && sum == size, "thread %d: merge of %d processes, sum %d", thread,
          merged_size, sum);
    /* A dup of MPI's merge (under accelerate): the library first names it in an all-reduction
     * over it, which every thread's merge needs at once. */
    CHECK_MPI(MPI_Comm_dup(merged, &copy));
    sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, copy));
    CHECK(sum == size, "thread %d: the merge's dup sums %d", thread, sum);
    CHECK_MPI(MPI_Comm_free(&copy));
    CHECK_MPI(MPI_Comm_free(&merged));
    if (!anytime) pthread_barrier_wait(&no_creation);
    CHECK_MPI(MPI_Comm_free(&inter));
    if (!anytime) pthread_barrier_wait(&no_creation);
    CHECK_MPI(MPI_Comm_free(&local));
  }
  return NULL;
}

int main(int argc, char **argv) {
  shim_init_thread_multiple(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1) rounds = atoi(argv[1]);
  if (argc > 2) anytime = strcmp(argv[2], "anytime") == 0;
  if (size >= 2) {
    pthread_t threads[kThreads];
    int ids[kThreads];
    CHECK(pthread_barrier_init(&no_creation, NULL, kThreads) == 0, "pthread_barrier_init");
    for (int t = 0; t < kThreads; ++t) CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &peers[t]));
    for (int t = 0; t < kThreads; ++t) {
      ids[t] = t;
      CHECK(pthread_create(&threads[t], NULL, make_intercomm, &ids[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&no_creation);
    for (int t = 0; t < kThreads; ++t) CHECK_MPI(MPI_Comm_free(&peers[t]));
    note("%d threads made %d intercommunicators each over their own peers, one tag", kThreads,
         rounds);
  } else {
    note("one process: no intercommunicator");
  }
  shim_test_end();
  MPI_Finalize();
  return 0;
}
