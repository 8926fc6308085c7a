#!/usr/bin/env bash
# Installs the system packages this project needs, if any are missing. Quiet when all are there.
#   tools/setup.sh [PACKAGE...]   also these (tools/library_tests.py asks for the libraries')
set -euo pipefail

packages=(
  g++ pkg-config meson ninja-build python3
  mpich libmpich-dev openmpi-bin libopenmpi-dev
  catch2
  gdb                 # a hung test prints its processes' stacks (tests/harness/stack_dump.h)
  cmake               # the install test builds docs/examples with find_package(rangecomm)
  gfortran            # and the Fortran example (Debian 13's MPI does not pull it in)
  libcli11-dev nlohmann-json3-dev  # options and JSON output of the benchmark drivers
  python3-matplotlib  # plots of benchmark results
  python3-pycparser   # the shim's wrapper generator parses mpi.h
  clang-format        # the style check (tests/check_format.py)
  dpkg-dev            # apt-get source unpacks MPICH's test suite (tools/mpich-testsuite.sh)
  libips4o-dev pdqsort-dev  # Janus Quicksort's local sorts (sort/include/rangecomm/jquick/local_sort.hpp)
  "$@"
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
(( ${#missing[@]} == 0 )) && exit 0

echo "setup: installing ${missing[*]}"
sudo=()
if (( $(id -u) != 0 )); then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install them" >&2; exit 1; }
  sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
echo "setup: done"
