/* The C drivers' share of bench_cli.hpp: option values checked with a clear message. */
#ifndef RANGECOMM_BENCH_CLI_H
#define RANGECOMM_BENCH_CLI_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
