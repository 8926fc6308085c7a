/* The driver's side of a Fortran test program (run_shim_test.py): after MPI_INIT,
 * shim_fortran_begin checks $SHIM_EXPECT against where the program's mpi_send_ comes from and
 * opens this rank's transcript; shim_fortran_line writes one line of it (and to standard
 * output). */
#include "../shim_check.h"

/* Whether the Fortran binding the program calls, mpi_send_, is librangecomm.so's. */
static int fortran_interposed(void) {
  Dl_info info;
  void *send = dlsym(RTLD_DEFAULT, "mpi_send_");
  CHECK(send != NULL, "no mpi_send_ in the program");
  return dladdr(send, &info) != 0 && strstr(info.dli_fname, "librangecomm") != NULL;
}

void shim_fortran_begin_(void) {
  const char *expect = getenv("SHIM_EXPECT");
  const char *dir = getenv("SHIM_TRANSCRIPT");
  MPI_Comm_rank(MPI_COMM_WORLD, &shim_world_rank);
  if (expect != NULL) {
    int want = strcmp(expect, "shim") == 0;
    CHECK(fortran_interposed() == want, "SHIM_EXPECT=%s but mpi_send_ %s librangecomm.so", expect,
          fortran_interposed() ? "comes from" : "does not come from");
  }
  if (dir != NULL && dir[0] != '\0') {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.txt", dir, shim_world_rank);
    shim_transcript_file = fopen(path, "w");
    CHECK(shim_transcript_file != NULL, "cannot write %s", path);
  }
}

/* CALL SHIM_FORTRAN_LINE(TEXT): the string without its trailing blanks. */
void shim_fortran_line_(const char *text, size_t length) {
  while (length > 0 && text[length - 1] == ' ') --length;
  printf("rank %d: %.*s\n", shim_world_rank, (int)length, text);
  fflush(stdout);
  note("%.*s", (int)length, text);
}

void shim_fortran_end_(void) { shim_test_end(); }
