/* The driver's side of a Fortran test program (run_shim_test.py): after MPI_INIT,
 * shim_fortran_begin checks $SHIM_EXPECT against where the program's mpi_send_ comes from and
 * opens this rank's transcript; shim_fortran_line writes one line of it (and to standard
 * output). And the C side of what a program does in both languages. */
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

/* CALL SHIM_C_READS_FORTRAN_ATTR(COMM): what C sees of an attribute that Fortran sets on COMM
 * (through the program's Fortran binding, MPI_COMM_SET_ATTR). MPI gives C a pointer to the
 * Fortran integer, valid until the attribute is deleted or replaced however the communicator's
 * other attributes come and go, and gives a C delete callback the same pointer. Writes the
 * values C read to the transcript. */
void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *ierr);

static MPI_Aint deleted_value = -1;

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  deleted_value = *(MPI_Aint *)value;
  return MPI_SUCCESS;
}

void shim_c_reads_fortran_attr_(MPI_Fint *fcomm) {
  enum { OTHERS = 8 };
  static int c_value = 7;
  MPI_Comm comm = MPI_Comm_f2c(*fcomm);
  int before, key, others[OTHERS], flag = 0;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &before, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &key, NULL);
  MPI_Comm_set_attr(comm, before, &c_value);
  MPI_Fint fortran_key = key, ierr = MPI_SUCCESS;
  MPI_Aint set = 1000 + shim_world_rank;
  mpi_comm_set_attr_(fcomm, &fortran_key, &set, &ierr);
  MPI_Aint *seen = NULL;
  MPI_Comm_get_attr(comm, key, &seen, &flag);
  CHECK(ierr == MPI_SUCCESS && flag && seen != NULL, "C does not see the attribute Fortran set");
  MPI_Aint first = *seen;
  MPI_Comm_delete_attr(comm, before); /* an attribute set before it goes */
  for (int i = 0; i < OTHERS; ++i) {  /* and more come */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &others[i], NULL);
    MPI_Comm_set_attr(comm, others[i], &c_value);
  }
  MPI_Aint later = *seen;
  MPI_Comm_delete_attr(comm, key);
  note(
      "C reads the attribute Fortran set: %ld, after others came and went: %ld, its C delete "
      "callback: %ld",
      (long)first, (long)later, (long)deleted_value);
  for (int i = 0; i < OTHERS; ++i) {
    MPI_Comm_delete_attr(comm, others[i]);
    MPI_Comm_free_keyval(&others[i]);
  }
  MPI_Comm_free_keyval(&before);
  MPI_Comm_free_keyval(&key);
}
