#!/usr/bin/env bash
# README command 1: installs what is missing, builds the Open MPI and MPICH variants, and runs
# the showcase (tools/showcase.py): every experiment of paper 001 (Figs. 4-9) and the extras,
# range communicators against native MPI, 8 ranks on Open MPI and 4 on MPICH. It ends with a
# summary table and the path of the results folder (CSV, JSON, PNG plots, logs). Arguments go
# to tools/showcase.py (--quick for a smoke run, --only KEYS, --help).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The libraries of the "libraries" experiment too: HDF5 for both MPIs, FFTW-MPI and PETSc
# (Debian builds those two on Open MPI).
tools/setup.sh libhdf5-mpich-dev libhdf5-openmpi-dev libfftw3-mpi-dev petsc-dev

# Configures $1 for MPI $2, or reconfigures it so that meson.build changes apply.
build() {
  local dir=$1 mpi=$2
  echo "== building $dir ($mpi)"
  if [[ -f $dir/meson-private/coredata.dat ]]; then
    meson setup --reconfigure "$dir" -Dmpi="$mpi" >/dev/null ||
      meson setup --wipe "$dir" -Dmpi="$mpi" >/dev/null
  else
    meson setup "$dir" -Dmpi="$mpi" >/dev/null
  fi
  # Only what the showcase runs: the benchmark drivers and the shared library, not the tests
  # (ninja takes output paths as targets).
  local targets
  targets=$(meson introspect --targets "$dir" | /usr/bin/python3 -c '
import json, os, sys
root = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin):
    for f in t["filename"]:
        rel = os.path.relpath(os.path.realpath(f), root)
        if rel.startswith("bench/") or t["type"] == "shared library":
            print(rel)' "$dir")
  # shellcheck disable=SC2086  # output paths never contain spaces
  ninja -C "$dir" $targets
}

# The build directories can be moved (e.g. to keep them apart from the tests' ones).
openmpi_dir=${SHOWCASE_BUILD_OPENMPI:-build-openmpi}
mpich_dir=${SHOWCASE_BUILD_MPICH:-build-mpich}
build "$openmpi_dir" openmpi
build "$mpich_dir" mpich

# Debian's python3 (with python3-matplotlib), not whatever python3 comes first in PATH.
exec /usr/bin/python3 tools/showcase.py --build-openmpi "$openmpi_dir" --build-mpich "$mpich_dir" "$@"
