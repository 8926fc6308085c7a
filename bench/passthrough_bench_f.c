/* passthrough_bench.f90's question, in C: is the program's mpi_comm_rank_ librangecomm.so's? */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

int passthrough_fortran_interposed_(void) {
  Dl_info info;
  void *fn = dlsym(RTLD_DEFAULT, "mpi_comm_rank_");
  return fn != NULL && dladdr(fn, &info) != 0 && info.dli_fname != NULL &&
         strstr(info.dli_fname, "librangecomm") != NULL;
}
