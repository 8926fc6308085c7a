/* RBC's range creation for the C drivers (capi_create_bench), in rbc_baseline.cpp: built with
 * -Drbc or -Dkadis, which define RANGECOMM_BENCH_RBC. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds for `count` creations of the range first..last of MPI_COMM_WORLD (as an RBC
 * communicator made once), each into a new RBC::Comm destroyed after it:
 * rbc_baseline::create_batch(fresh). */
double rbc_baseline_world_batch(int first, int last, long count);

#ifdef __cplusplus
}
#endif
