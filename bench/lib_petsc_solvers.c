/* lib_petsc_solvers: a PETSc program with many linear solvers alive at once, each on a
 * sub-communicator of its own, as multiphysics and domain-decomposition codes keep one solver per
 * block, field or subdomain group. Plain PETSc: run it natively and under `rangecomm-run --mode
 * accelerate` (bench/library_programs.py does both).
 *
 *   lib_petsc_solvers N     (under mpiexec)
 *
 * Makes up to N solvers: solver i splits MPI_COMM_WORLD into halves (odd i: by parity of the
 * rank instead), and on its half builds a tridiagonal system of 8 rows per process (PETSc
 * duplicates each new communicator for its objects), a right-hand side and a conjugate-gradient
 * solver with Jacobi preconditioning, and solves it; all stay alive. Then every solver solves
 * again and its solution is checked against the known one, and all are destroyed. It stops at
 * the first solver that cannot be made. Rank 0 prints
 *   progress petsc_solvers SOLVERS MICROSECONDS_PER_SOLVER
 * after every 10 solvers (the time to make one and solve once, so far), and at the end
 *   result petsc_solvers SOLVERS MICROSECONDS_PER_SOLVER */
#include <petscksp.h>

enum { ROWS = 8 }; /* per process */

typedef struct {
  MPI_Comm comm;
  Mat a;
  Vec x, b, exact;
  KSP ksp;
} Solver;

static PetscErrorCode make_solver(Solver *s, long i, int rank, int size) {
  int colour = i % 2 == 0 ? rank < (size + 1) / 2 : rank % 2;
  if (MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &s->comm) != MPI_SUCCESS) return PETSC_ERR_MPI;
  PetscInt n = 0, first = 0, last = 0;
  int members = 0;
  MPI_Comm_size(s->comm, &members);
  n = (PetscInt)members * ROWS;
  PetscCall(MatCreateAIJ(s->comm, ROWS, ROWS, n, n, 3, NULL, 1, NULL, &s->a));
  PetscCall(MatGetOwnershipRange(s->a, &first, &last));
  for (PetscInt row = first; row < last; ++row) {
    PetscScalar diagonal = 2.0 + (PetscScalar)(i % 7), off = -1.0;
    PetscCall(MatSetValue(s->a, row, row, diagonal, INSERT_VALUES));
    if (row > 0) PetscCall(MatSetValue(s->a, row, row - 1, off, INSERT_VALUES));
    if (row + 1 < n) PetscCall(MatSetValue(s->a, row, row + 1, off, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(s->a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(s->a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(s->a, &s->x, &s->b));
  PetscCall(VecDuplicate(s->x, &s->exact));
  for (PetscInt row = first; row < last; ++row)
    PetscCall(VecSetValue(s->exact, row, (PetscScalar)(row % 5) + 1.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(s->exact));
  PetscCall(VecAssemblyEnd(s->exact));
  PetscCall(MatMult(s->a, s->exact, s->b));
  PetscCall(KSPCreate(s->comm, &s->ksp));
  PetscCall(KSPSetOperators(s->ksp, s->a, s->a));
  PetscCall(KSPSetType(s->ksp, KSPCG));
  PC pc;
  PetscCall(KSPGetPC(s->ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(s->ksp, 1e-12, 1e-50, PETSC_DEFAULT, 1000));
  PetscCall(KSPSolve(s->ksp, s->b, s->x));
  return 0;
}

static PetscErrorCode check_solver(Solver *s) {
  PetscReal error = 0;
  PetscCall(VecSet(s->x, 0.0));
  PetscCall(KSPSolve(s->ksp, s->b, s->x));
  PetscCall(VecAXPY(s->x, -1.0, s->exact));
  PetscCall(VecNorm(s->x, NORM_INFINITY, &error));
  PetscCheck(error < 1e-8, s->comm, PETSC_ERR_PLIB, "a solver's solution is off by %g",
             (double)error);
  return 0;
}

static void destroy_solver(Solver *s) {
  KSPDestroy(&s->ksp);
  VecDestroy(&s->exact);
  VecDestroy(&s->b);
  VecDestroy(&s->x);
  MatDestroy(&s->a);
  MPI_Comm_free(&s->comm);
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  PetscCheck(n >= 1 && n <= 10000000, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "usage: lib_petsc_solvers N (solvers, at least 1)");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Solver *solvers = calloc((size_t)n, sizeof(Solver));
  PetscCheck(solvers != NULL, PETSC_COMM_WORLD, PETSC_ERR_MEM, "out of memory");

  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  long made = 0;
  for (; made < n; ++made) {
    int ok = make_solver(&solvers[made], made, rank, size) == 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) break; /* what was made of the last one is left: PETSc ends with it */
    if (rank == 0 && (made + 1) % 10 == 0) {
      printf("progress petsc_solvers %ld %.3f\n", made + 1,
             (MPI_Wtime() - start) * 1e6 / (double)(made + 1));
      fflush(stdout);
    }
  }
  double built = MPI_Wtime() - start;
  for (long i = 0; i < made; ++i) PetscCall(check_solver(&solvers[i]));
  for (long i = 0; i < made; ++i) destroy_solver(&solvers[i]);
  if (rank == 0)
    printf("result petsc_solvers %ld %.3f\n", made, made > 0 ? built * 1e6 / (double)made : 0.0);
  free(solvers);
  PetscCall(PetscFinalize());
  return 0;
}
