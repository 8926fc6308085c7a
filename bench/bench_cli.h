/* The C drivers' share of bench_cli.hpp: option values checked with a clear message, medians,
 * and the launcher of the drivers that start their own MPI runs. */
#ifndef RANGECOMM_BENCH_CLI_H
#define RANGECOMM_BENCH_CLI_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses the value of option --name as a whole decimal number in [lo, hi] into *out; on
 * anything else prints "<program>: --name: ..." on stderr and returns 0. */
static inline int bench_number(const char *program, const char *name, const char *text, long lo,
                               long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "%s: --%s: '%s' is not a number in %ld..%ld (see --help)\n", program, name,
            text, lo, hi);
    return 0;
  }
  *out = v;
  return 1;
}

/* --format: "table" or "csv" (then *csv = 1); anything else prints a message and returns 0. */
static inline int bench_format(const char *program, const char *text, int *csv) {
  int ok = strcmp(text, "csv") == 0 || strcmp(text, "table") == 0;
  if (!ok) fprintf(stderr, "%s: --format: table or csv, not '%s'\n", program, text);
  *csv = strcmp(text, "csv") == 0;
  return ok;
}

static inline int bench_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n); sorts v, so v[0] and v[n-1] are then the least and the greatest. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The drivers that start their own MPI runs (--compare LIB [options] -- MPIEXEC [ARGS...]):
 * after getopt_long has stopped at "--", finds the launcher's words and this program's absolute
 * path, and quotes the words for popen's shell into `launcher`. Returns 0, or prints the usage
 * line and returns 2. */
static inline int bench_launcher(const char *program, int argc, char **argv, int optind_after,
                                 char *launcher, size_t size, char *self) {
  int separator =
      optind_after > 0 && strcmp(argv[optind_after - 1], "--") == 0 ? optind_after - 1 : -1;
  if (separator < 0 || separator + 1 >= argc) {
    fprintf(stderr, "usage: %s --compare LIB [options] -- MPIEXEC [ARGS...]\n", program);
    return 2;
  }
  launcher[0] = '\0';
  for (int i = separator + 1; i < argc; ++i) {
    strncat(launcher, "'", size - strlen(launcher) - 1);
    strncat(launcher, argv[i], size - strlen(launcher) - 1);
    strncat(launcher, "' ", size - strlen(launcher) - 1);
  }
  return realpath(argv[0], self) == NULL ? 2 : 0;
}

#endif
