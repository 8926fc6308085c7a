/* lib_hdf5_files: a parallel HDF5 program that keeps many files open, as a simulation writing
 * one file per variable, per rank group or per output step does. Plain HDF5 on MPI: run it
 * natively and under `rangecomm-run --mode accelerate` (bench/library_programs.py does both).
 *
 *   lib_hdf5_files N     (under mpiexec)
 *
 * Creates up to N files in a fresh folder of TMPDIR, each with H5Fcreate on MPI_COMM_WORLD
 * (HDF5 duplicates the communicator for each file, and MPI-IO its own again), writes a dataset
 * of one int per process into each with a collective write, and keeps them all open; then reads
 * every file's dataset back, checks it, and closes all. It stops creating at the first file
 * HDF5 cannot create. Rank 0 prints
 *   progress hdf5_files OPENED MICROSECONDS_PER_FILE
 * after every 10 files (the time to create one and write it, so far), then
 *   result hdf5_files OPENED MICROSECONDS_PER_FILE
 * and exits with status 0 when the files it kept were all read back right, whether or not all
 * N could be created. Natively on MPICH 4.0 the program does not get that far: when the context
 * ids run out (two per file), ROMIO's MPI_File_open dereferences the failed duplicate and the
 * processes die of a segmentation fault; the last progress line says how far they got. */
#define _GNU_SOURCE
#include <errno.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int rank, size;

static void fail(const char *what) {
  fprintf(stderr, "lib_hdf5_files: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Every file needs a descriptor at every process: the soft limit goes up to the hard one. */
static void raise_descriptor_limit(void) {
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  if (n < 1 || n > 10000000) fail("usage: lib_hdf5_files N (files, at least 1)");
  /* A failing creation returns an error instead of ending the program: how many files fit is
   * what this measures. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  raise_descriptor_limit();

  char folder[4096] = {0};
  if (rank == 0) {
    const char *tmp = getenv("TMPDIR");
    snprintf(folder, sizeof folder, "%s/lib_hdf5_files-XXXXXX", tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(folder) == NULL) fail(strerror(errno));
  }
  MPI_Bcast(folder, sizeof folder, MPI_CHAR, 0, MPI_COMM_WORLD);

  hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(access, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t transfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE);
  hsize_t whole = (hsize_t)size, one = 1, mine = (hsize_t)rank;
  hid_t space = H5Screate_simple(1, &whole, NULL);
  hid_t memory = H5Screate_simple(1, &one, NULL);
  hid_t *files = malloc(sizeof(hid_t) * (size_t)n);
  if (files == NULL) fail("out of memory");

  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  long opened = 0;
  char name[4200];
  for (; opened < n; ++opened) {
    snprintf(name, sizeof name, "%s/%ld.h5", folder, opened);
    hid_t file = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, access);
    int ok = file >= 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (file >= 0) H5Fclose(file);
      break;
    }
    files[opened] = file;
    hid_t data =
        H5Dcreate2(file, "ranks", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t part = H5Scopy(space);
    H5Sselect_hyperslab(part, H5S_SELECT_SET, &mine, NULL, &one, NULL);
    int value = rank + (int)opened;
    if (data < 0 || H5Dwrite(data, H5T_NATIVE_INT, memory, part, transfer, &value) < 0)
      fail("writing a dataset failed");
    H5Sclose(part);
    H5Dclose(data);
    if (rank == 0 && (opened + 1) % 10 == 0) {
      printf("progress hdf5_files %ld %.3f\n", opened + 1,
             (MPI_Wtime() - start) * 1e6 / (double)(opened + 1));
      fflush(stdout);
    }
  }
  double created = MPI_Wtime() - start;

  int *back = malloc(sizeof(int) * (size_t)size);
  if (back == NULL) fail("out of memory");
  for (long i = 0; i < opened; ++i) {
    hid_t data = H5Dopen2(files[i], "ranks", H5P_DEFAULT);
    if (data < 0 || H5Dread(data, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, transfer, back) < 0)
      fail("reading a dataset back failed");
    for (int q = 0; q < size; ++q)
      if (back[q] != q + (int)i) fail("a file holds other data than was written");
    H5Dclose(data);
  }
  for (long i = 0; i < opened; ++i) H5Fclose(files[i]);

  if (rank == 0) {
    for (long i = 0; i < opened; ++i) {
      snprintf(name, sizeof name, "%s/%ld.h5", folder, i);
      unlink(name);
    }
    rmdir(folder);
    printf("result hdf5_files %ld %.3f\n", opened,
           opened > 0 ? created * 1e6 / (double)opened : 0.0);
  }
  free(back);
  free(files);
  H5Sclose(memory);
  H5Sclose(space);
  H5Pclose(transfer);
  H5Pclose(access);
  MPI_Finalize();
  return 0;
}
