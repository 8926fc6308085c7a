/* The parts of the pass-through test program (passthrough*.c). */
#ifndef PASSTHROUGH_H
#define PASSTHROUGH_H

#include "shim_check.h"

void test_nonblocking_p2p(MPI_Comm comm, int r, int p);
void test_request_arrays(MPI_Comm comm, int r, int p);
void test_attributes(MPI_Comm comm, int r, int p);
void test_error_handlers(MPI_Comm comm, int r, int p);
void test_collectives(MPI_Comm comm, int r, int p);
void test_window_and_topology(MPI_Comm comm, int r, int p);

#endif
