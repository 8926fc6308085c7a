// kadis_baseline.hpp on KaDiS's public JanusSort::Sorter; nothing of KaDiS is changed or copied.
#include "kadis_baseline.hpp"

#include <JanusSort/JanusSort.hpp>

#include <functional>

namespace kadis_baseline {

int janus_sort(std::vector<double>& data, MPI_Comm comm, Backend backend, int seed) {
  const bool native = backend == Backend::native;
  JanusSort::Sorter<double> sorter(MPI_DOUBLE, seed, /*min_samples=*/64, /*barriers=*/false,
                                   /*split_MPI_comm=*/native, /*use_MPI_collectives=*/native);
  sorter.sort(comm, data, std::less<double>(), /*global_elements=*/-1);
  return MPI_SUCCESS;
}

}  // namespace kadis_baseline
