#!/usr/bin/env bash
# The simulated build: the library and Janus Quicksort compiled for SimGrid's MPI simulator
# (SMPI), whose programs run thousands of simulated processes in one OS process (sim/). It is
# made against Debian 13's SimGrid 4.0, so on a Debian 12 machine every command runs inside the
# Debian 13 root of tools/debian13.sh.
#
#   tools/simulated.sh setup               libsimgrid-dev, and Debian's catch2 source of the
#                                          installed version (the tests' Catch2, compiled
#                                          position-independent) in .cache/catch2-source/
#   tools/simulated.sh build [DIR]         setup, configure and build DIR (build-sim)
#   tools/simulated.sh test [DIR] [ARGS]   build, then meson test --suite sim ARGS
#   tools/simulated.sh options             setup, then print the build's meson options besides
#                                          -Dmpi=smpi (for tools/run-tests.sh)
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

command=${1:-}
(( $# > 0 )) && shift
case $command in
  setup | build | test | options) ;;
  *) sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2 ;;
esac

# On Debian 12 (SimGrid 3.32, Catch2 2) the same command inside the Debian 13 root: the
# simulated build is made and tested against SimGrid 4.0, the version sim/compat/ describes.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [[ $codename == bookworm || $codename == bullseye ]]; then
  exec tools/debian13.sh run tools/simulated.sh "$command" "$@"
fi

catch2_source() {
  local version
  version=$(dpkg-query -W -f='${source:Version}' libcatch2-dev 2>/dev/null ||
            dpkg-query -W -f='${Version}' catch2)
  echo "$top/.cache/catch2-source/catch2-$version"
}

setup() {
  tools/setup.sh libsimgrid-dev
  local dir version
  dir=$(catch2_source)
  version=${dir##*/catch2-}
  if [[ ! -f $dir/.complete ]]; then
    echo "simulated: fetching Debian's catch2 $version source"
    tools/apt-source.sh "catch2=$version" "$dir"
    touch "$dir/.complete"
  fi
}

options() {
  echo "-Dcatch2_source=$(catch2_source) -Dbuildtype=debugoptimized"
}

build() {
  local dir=$1
  setup
  local options
  read -r -a options < <(options)
  options=(-Dmpi=smpi "${options[@]}")
  [[ ${CI:-} == true ]] && options+=(-Db_colorout=never)
  if [[ -f $dir/meson-private/coredata.dat ]]; then
    meson setup --reconfigure "$dir" "${options[@]}" | tail -n 3
  else
    meson setup "$dir" "${options[@]}" | tail -n 3
  fi
  meson compile -C "$dir"
}

dir=build-sim
if (( $# > 0 )) && [[ $1 != -* ]]; then
  dir=$1
  shift
fi
case $command in
  setup) setup ;;
  options)
    setup >&2
    options
    ;;
  build) build "$dir" ;;
  test)
    build "$dir"
    meson test -C "$dir" --no-rebuild --suite sim "$@"
    ;;
esac
