#!/usr/bin/env bash
# Runs MPICH's own test suite (test/mpi of the installed MPICH's Debian source package) against
# MPICH and Open MPI, natively and under librangecomm.so in the off, accelerate and shadow
# modes (docs/mpich-suite.md). The last line is "N passed, N failed"; the exit status is nonzero
# if a test that passes natively fails under the library (and is no `library-bug` entry of
# tests/mpich-suite/expectations.txt), or a test fails natively without a `native` entry.
#
#   tools/mpich-testsuite.sh [--full] [--build-mpich DIR] [--build-openmpi DIR]
#                            [--configs A,B] [--dirs D,E] [--tests PATTERN,...]
#                            [--time-limit S] [--results FILE] [--baselines FILE]
#                            [--lock FILE] [--fetch-only] [--source-version V] [--fortran]
#
# Without --full it runs the CI subset (tests/mpich-suite/ci-tests.txt, about 4 minutes on two
# cores); --full runs every test of the directories. --fortran runs MPICH's Fortran tests
# (the f77, f90 and f08 directories) instead of the C ones, without --full those of
# tests/mpich-suite/ci-fortran-tests.txt. The sources are fetched once with
# `apt-get source mpich=<version>` into .cache/mpich-testsuite/ (MPICH_SUITE_CACHE), with a
# private sources list and state, so the machine's apt setup is untouched; the tests are built
# there too, one program at a time with at most two compilers running. --lock FILE (or
# MPICH_SUITE_LOCK) holds an flock on FILE during each test, for machines shared with other
# MPI jobs that take the same lock. --source-version V runs the suite of MPICH V (already
# fetched into the cache, e.g. by a run on another Debian release) against the installed MPIs.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

full=0
fortran=0
fetch_only=0
build_mpich=build-mpich
build_openmpi=build-openmpi
source_version=
pass=()
while (( $# > 0 )); do
  case $1 in
    --full) full=1; shift ;;
    --fortran) fortran=1; pass+=("$1"); shift ;;
    --fetch-only) fetch_only=1; shift ;;
    --build-mpich) build_mpich=$2; shift 2 ;;
    --build-openmpi) build_openmpi=$2; shift 2 ;;
    --source-version) source_version=$2; shift 2 ;;
    --configs|--dirs|--tests|--time-limit|--results|--baselines|--jobs|--tail|--lock) pass+=("$1" "$2"); shift 2 ;;
    --build-only) pass+=("$1"); shift ;;
    -h|--help) sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "mpich-testsuite: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

cache=${MPICH_SUITE_CACHE:-$top/.cache/mpich-testsuite}
installed=$(dpkg-query -W -f='${source:Version}' libmpich-dev 2>/dev/null) ||
  { echo "mpich-testsuite: MPICH (libmpich-dev) is not installed"; echo "0 passed, 1 failed"; exit 1; }
version=${source_version:-$installed}
source_dir=$cache/mpich-$version
suite=$source_dir/test/mpi

# Fetches and unpacks the source package once; keeps test/mpi only.
fetch() {
  [[ -f $source_dir/.complete ]] && return 0
  [[ $version == "$installed" ]] ||
    { echo "mpich-testsuite: MPICH $version's suite is not in $cache (fetch it where that version is installed)"; return 1; }
  local unpacked=$cache/download/mpich-$version
  tools/apt-source.sh "mpich=$version" "$unpacked" || return 1
  [[ -d $unpacked/test/mpi ]] ||
    { echo "mpich-testsuite: no test/mpi in the source package"; return 1; }
  rm -rf "$source_dir"
  mkdir -p "$source_dir/test"
  mv "$unpacked/test/mpi" "$source_dir/test/mpi"
  cp "$unpacked/COPYRIGHT" "$source_dir/" 2>/dev/null || true
  rm -rf "$unpacked"
  touch "$source_dir/.complete"
}


if ! fetch; then
  echo "0 passed, 1 failed"
  exit 1
fi
(( fetch_only )) && exit 0

for dir in "$build_mpich" "$build_openmpi"; do
  [[ -f $dir/shim/librangecomm.so && -x $dir/shim/rangecomm-run ]] || {
    echo "mpich-testsuite: build $dir first (meson compile -C $dir shim/librangecomm.so shim/rangecomm-run)"
    echo "0 passed, 1 failed"
    exit 1
  }
done

subset=()
if (( ! full )); then
  if (( fortran )); then subset=(--subset tests/mpich-suite/ci-fortran-tests.txt)
  else subset=(--subset tests/mpich-suite/ci-tests.txt); fi
fi
status=0
python3 tools/mpich_testsuite.py --suite "$suite" --work "$source_dir/work-for-$installed" \
  --config-headers tests/mpich-suite --expectations tests/mpich-suite/expectations.txt \
  --build-mpich "$build_mpich" --build-openmpi "$build_openmpi" \
  "${subset[@]}" "${pass[@]}" || status=$?

exit $status
