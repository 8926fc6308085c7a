/* Stand-ins for the library's Fortran MPIX_ calls, so that a Fortran test program can be built
 * without librangecomm.so and run under LD_PRELOAD, which puts the library's definitions ahead
 * of these (what RANGECOMM_WEAK_SYMBOLS does for C, which Fortran cannot ask for). Reaching one
 * means the library was not there. */
#include <stdio.h>
#include <stdlib.h>

static void absent(const char *name) {
  fprintf(stderr, "%s called without librangecomm.so\n", name);
  abort();
}

void mpix_comm_create_range_(void) { absent("MPIX_Comm_create_range"); }
void mpix_icomm_create_group_(void) { absent("MPIX_Icomm_create_group"); }
void mpix_comm_is_range_(void) { absent("MPIX_Comm_is_range"); }
