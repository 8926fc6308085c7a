// KaDiS's Janus Quicksort (github.com/MichaelAxtmann/KaDiS, JanusSort::Sorter) behind one call,
// so that sort_bench can run it beside rangecomm::jquick_sort on the same inputs in the same
// run. Built only with -Dkadis (bench/baselines/meson.build), which also defines
// RANGECOMM_BENCH_KADIS for the drivers.
#pragma once

#include <mpi.h>

#include <vector>

namespace kadis_baseline {

enum class Backend {
  range,   // subgroups are RBC ranges, RBC's collectives (JanusSort::sort's default)
  native,  // subgroups by MPI_Comm_create_group, MPI's collectives (split_MPI_comm and
           // use_MPI_collectives of JanusSort::Sorter)
};

// Sorts the doubles of all ranks of comm (collective); KaDiS balances the output as
// rangecomm::jquick_sort does. Returns MPI_SUCCESS (KaDiS reports no errors).
int janus_sort(std::vector<double>& data, MPI_Comm comm, Backend backend, int seed);

}  // namespace kadis_baseline
