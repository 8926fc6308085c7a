#!/usr/bin/env bash
# Installs what is missing, builds both MPI variants and runs the benchmark bench/create_bench:
# 8 ranks on Open MPI (oversubscribed on this 2-core machine), then 4 on MPICH. Arguments are
# passed on to create_bench.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools/setup.sh

# The launcher options match those of the tests in meson.build.
openmpi_args=(--oversubscribe --bind-to none)
if (( $(id -u) == 0 )); then
  openmpi_args+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

build() {
  local dir=$1 mpi=$2
  if [[ -f $dir/meson-private/coredata.dat ]]; then
    meson setup --reconfigure "$dir" -Dmpi="$mpi" >/dev/null
  else
    meson setup "$dir" -Dmpi="$mpi" >/dev/null
  fi
  meson compile -C "$dir"
  if [[ ! -x $dir/bench/create_bench ]]; then
    echo "run-showcase: $dir/bench/create_bench was not built:" \
         "bench/meson.build has no executable target 'create_bench' yet" >&2
    exit 1
  fi
}

build build-openmpi openmpi
build build-mpich mpich

echo "== Open MPI, 8 ranks"
mpiexec.openmpi "${openmpi_args[@]}" -n 8 build-openmpi/bench/create_bench "$@"
echo "== MPICH, 4 ranks"
mpiexec.mpich -launcher fork -n 4 build-mpich/bench/create_bench "$@"
