// What the Fortran entry points (shim/src/fortran/) tell the semantics half, and ask of it:
// callbacks written in Fortran, and attributes whose values are Fortran integers.
#pragma once

#include <mpi.h>

// Reads attribute `keyval` of a real communicator as MPI's Fortran binding gives it.
typedef int rc_fortran_attr_reader(MPI_Comm comm, int keyval, MPI_Aint* value, int* flag);

// comms/attributes.cpp
extern "C" void rc_fortran_keyval_made(int keyval, void* copy, void* del, MPI_Aint extra, int mpi1,
                                       rc_fortran_attr_reader* read_real);
extern "C" int rc_fortran_comm_set_attr(MPI_Comm comm, int keyval, MPI_Aint value, int mpi1);
extern "C" int rc_fortran_comm_get_attr(MPI_Comm comm, int keyval, MPI_Aint* value, int* flag);

// handles/error_dispatch.cpp: an error handler whose function is a Fortran subroutine
// (communicator and error code by reference, the communicator as a Fortran handle).
extern "C" void rc_fortran_errhandler_made(MPI_Errhandler errhandler, void* fn);
