/* Hand-made replacement for the configure-generated mpitestconf.h of MPICH's test suite
 * (test/mpi/include/mpitestconf.h.in), for Debian 12 on x86-64 with gcc, MPICH 4.0 and
 * Open MPI 4.1. tools/mpich-testsuite.sh puts it first on the include path. USE_STRICT_MPI
 * stays undefined for both MPIs (MPICH's configure default), so both run the same checks; a
 * test that uses MPICH's extensions does not compile on Open MPI and is not applicable there. */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

#define HAVE_DLFCN_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_MEMORY_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define STDC_HEADERS 1

#define HAVE_GETRUSAGE 1
#define HAVE_STRDUP 1
#define HAVE_USLEEP 1
#define HAVE_H_ADDR_LIST 1

#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE__BOOL 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_LONG_DOUBLE_COMPLEX 1

#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long

/* Both MPIs have one-sided communication, MPI-IO (ROMIO) and dynamic processes. */
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_IO 1
#define HAVE_MPI_SPAWN 1
#define MPIO_USES_MPI_REQUEST 1
#define HAVE_MPI_INTEGER16 1

/* POSIX threads, as include/mpithreadtest.h numbers the packages. */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX

#define PACKAGE "mpich-testsuite"
#define PACKAGE_NAME "mpich-testsuite"
#define PACKAGE_VERSION "4.0.2"
#define VERSION "4.0.2"

#endif /* MPITESTCONF_H_INCLUDED */
