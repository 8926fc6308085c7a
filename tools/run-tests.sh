#!/usr/bin/env bash
# Installs what is missing, builds the MPICH and Open MPI variants and runs every test in both,
# MPICH's test suite and the tests of PETSc and parallel HDF5 under the library,
# on this machine's MPI generation (Debian 12: MPICH 4.0, Open MPI 4.1) and then on Debian 13's
# (MPICH 4.2, Open MPI 5.0) in a Debian 13 root that tools/debian13.sh makes and caches. The last
# line is always "N passed, N failed" summed over every stage (a build that fails counts as one
# failed test); the exit status is nonzero if anything failed.
#
#   tools/run-tests.sh                   both generations
#   tools/run-tests.sh --here-only       this machine's generation only
#   tools/run-tests.sh --debian13-only   the Debian 13 stages only (from this machine)
#   tools/run-tests.sh --inside-debian13    (what the Debian 13 stage runs inside the root)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stages=all
case ${1:-} in
  --here-only) stages=here ;;
  --debian13-only) stages=debian13 ;;
  --inside-debian13) stages=inside ;;
  '') ;;
  *) echo "run-tests: unknown option $1 (see the head of tools/run-tests.sh)" >&2; exit 2 ;;
esac

passed=0
failed=0
failures=()  # what failed, a line per test or stage, repeated above the summary line
times=()     # each stage's time, recapped above the summary line

# Seconds since the outermost run started (the Debian 13 stages' nested run counts from it too),
# so a stage's start line says how far into the budget it begins.
export RANGECOMM_TESTS_STARTED=${RANGECOMM_TESTS_STARTED:-$(date +%s)}
spent() { echo $(( $(date +%s) - RANGECOMM_TESTS_STARTED )); }
elapsed() {
  local s
  s=$(spent)
  echo "$((s / 60)) min $((s % 60)) s"
}

# Under CI the whole command is stopped at 90 minutes, with no summary line. A stage that would
# begin after 84 minutes is not run and counts as one failure, so the end still says what took
# the time and what was left out. RANGECOMM_TESTS_BUDGET (minutes) sets that limit; 0 means none,
# the default outside CI.
budget_minutes=${RANGECOMM_TESTS_BUDGET:-$([[ ${CI:-} == true ]] && echo 84 || echo 0)}

# Prints a stage's start line, "== <what> (at <elapsed>)", and starts its clock; fails (and
# counts the stage as failed) when the budget is spent.
stage_start=0
begin_stage() {
  if (( budget_minutes > 0 && $(spent) > budget_minutes * 60 )); then
    echo "== $1: NOT RUN, the test command's budget of $budget_minutes minutes is spent" \
         "(at $(elapsed))"
    failed=$((failed + 1))
    failures+=("$1: not run (budget of $budget_minutes minutes spent)")
    return 1
  fi
  echo "== $1 (at $(elapsed))"
  stage_start=$SECONDS
}

# Prints "== <what>: <seconds> s" for the stage begun last and keeps it for the recap.
end_stage() {
  times+=("$1: $((SECONDS - stage_start)) s")
  echo "== ${times[-1]}"
}

finish() {
  if (( ${#times[@]} > 0 )); then
    echo "run-tests: stage times:"
    printf '  %s\n' "${times[@]}"
  fi
  if (( ${#failures[@]} > 0 )); then
    echo "run-tests: what failed:"
    printf '  %s\n' "${failures[@]}"
  fi
  echo "run-tests: $((SECONDS / 60)) min $((SECONDS % 60)) s in all" \
       "(from the outermost start: $(elapsed))"
  echo "$passed passed, $failed failed"
  (( failed == 0 ))
  exit
}

# Configures $1 for MPI $2 with options $3... (or reconfigures it, so option and meson.build
# changes apply).
configure() {
  local dir=$1 options=(-Dmpi="$2" "${@:3}") log
  [[ ${CI:-} == true ]] && options+=(-Db_colorout=never)
  if [[ -f $dir/meson-private/coredata.dat ]]; then
    log=$(meson setup --reconfigure "$dir" "${options[@]}" 2>&1) ||
      log=$(meson setup --wipe "$dir" "${options[@]}" 2>&1)
  else
    log=$(meson setup "$dir" "${options[@]}" 2>&1)
  fi || { echo "$log" | tail -n 40; return 1; }
}

# Prints "<passed> <failed>" from meson's test log, then the name and result of each failed test
# a line each, the first five followed by the last lines of their output marked "  | " (for the
# recap at the end, which is what a CI log's tail keeps); a longer tail of each goes to standard
# error.
summarize() {
  python3 - "$1" <<'PY'
import json, re, sys
passed = failed = 0
names = []
with open(sys.argv[1]) as log:
    for line in log:
        test = json.loads(line)
        if test["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
            passed += test["result"] != "SKIP"
            continue
        failed += 1
        output = (test.get("stdout") or "") + (test.get("stderr") or "")
        lines = output.rstrip("\n").splitlines()
        tail = lines[-40:]
        names.append((f"{test['name']}: {test['result']}", tail, lines))
        print(f"---- {test['name']}: {test['result']} (last {len(tail)} lines of its output)",
              file=sys.stderr)
        for text in tail:
            print("  | " + text, file=sys.stderr)
print(passed, failed)
# The lines that say what went wrong (a time limit's case and phase, an assertion, a signal)
# come before the stacks a hang prints, so the recap shows them above the tail.
telling = re.compile(r"time limit|timed out|FAILED|[Aa]ssert|[Aa]bort|[Ss]ignal|[Ee]rror|differ")
for i, (name, tail, output) in enumerate(names):
    print(name)
    if i >= 5:  # the first five failures' lines
        continue
    shown = tail[-12:]
    told = [text for text in output if telling.search(text) and not text.startswith("[rank")]
    told = [text for text in dict.fromkeys(told) if text not in shown][:6]
    for text in told + (["..."] if told else []) + shown:
        print("  | " + text)
PY
}

# ccache, which meson uses when it is there: on a machine that ran this command before, the
# seven builds below recompile only what changed, from whichever folder the clone is in (paths
# are hashed relative to it; the cache is ccache's own, ~/.cache/ccache, kept at 4 GiB here; the
# Debian 13 root has its own).
tools/setup.sh ccache || { echo "run-tests: installing the requirements failed"; failed=1; finish; }
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1

# What MPICH's test suite runs under on this machine's MPIs: natively and in the accelerate and
# shadow modes. The off mode (the library loaded, passing every call through) runs in the
# builds' own tests, and in these tools' --full runs. On Debian 13's MPIs and in the libraries'
# tests, natively and in the accelerate mode: their shadow runs (about 3 minutes) are left to
# the tools themselves, within the budget of this command (their last results:
# docs/mpich-suite.md, docs/libraries.md).
configs_of() { for mpi in mpich openmpi; do printf "$mpi-%s\n" ${1//,/ }; done | paste -sd,; }
suite_configs=$(configs_of native,accelerate,shadow)
short_modes=native,accelerate

if (( $(id -u) == 0 )); then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if [[ ${CI:-} == true ]]; then
  export TERM=dumb NO_COLOR=1  # plain logs: meson and Catch colour only real terminals anyway
fi

# Builds $1 for MPI $2 and runs its tests; configure options, then "--", then meson test options.
# $compile_targets, when set, names the targets to build instead of all; a test option
# --names-matching REGEX runs the tests whose lines in `meson test --list` ("project:suites /
# name") match (known once configured).
compile_targets=()
build_and_test() {
  local dir=$1 mpi=$2 options=() test_options=() pattern=''
  shift 2
  while (( $# > 0 )) && [[ $1 != -- ]]; do options+=("$1"); shift; done
  (( $# > 0 )) && shift
  while (( $# > 0 )); do
    if [[ $1 == --names-matching ]]; then pattern=$2; shift 2; else test_options+=("$1"); shift; fi
  done
  begin_stage "$dir: configure and build" || return
  if ! configure "$dir" "$mpi" "${options[@]}" ||
     ! meson compile -C "$dir" "${compile_targets[@]}"; then
    echo "run-tests: the $dir build failed"
    failed=$((failed + 1))
    failures+=("$dir: the build")
    return
  fi

  end_stage "$dir: build"
  begin_stage "$dir: test" || return
  if [[ -n $pattern ]]; then
    mapfile -t -O "${#test_options[@]}" test_options < <(
      meson test -C "$dir" --no-rebuild --list 2>/dev/null | grep -E "$pattern" | sed 's/.* \/ //')
  fi
  local testlog=$dir/meson-logs/testlog.json status p='' f='' name
  rm -f "$testlog"
  meson test -C "$dir" --no-rebuild "${test_options[@]}"
  status=$?
  if [[ -f $testlog ]]; then
    { read -r p f
      while IFS= read -r name; do
        if [[ $name == '  | '* ]]; then failures+=("$name")
        elif [[ -n $name ]]; then failures+=("$dir: $name"); fi
      done; } \
      < <(summarize "$testlog")
  fi
  if [[ -z $f ]]; then
    echo "run-tests: no test log in $dir"
    p=0 f=1
    failures+=("$dir: no test log")
  elif (( status != 0 && f == 0 )); then
    echo "run-tests: meson test exited with status $status in $dir"
    f=1
    failures+=("$dir: meson test exited with status $status")
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  end_stage "$dir: test"
}


# Runs a command that ends with its own "N passed, N failed" line, shows its output, and adds
# that line to the totals (a nonzero exit with no failure counted, or no such line, is one
# failure). $1 names it in messages; the command follows.
run_counted() {
  local what=$1 log status p f recap line
  shift
  log=$(mktemp)
  "$@" | tee "$log"
  status=${PIPESTATUS[0]}
  # A nested run-tests' stage times join this run's recap.
  while read -r line; do
    [[ -n $line ]] && times+=("$what: $line")
  done < <(sed -n '/^run-tests: stage times:/,/^[^ ]/{/^  /p}' "$log")
  if read -r p _ f _ < <(tail -n 1 "$log") && [[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ ]]; then
    (( status != 0 && f == 0 )) && f=1
    passed=$((passed + p))
    failed=$((failed + f))
    if (( f > 0 )); then
      failures+=("$what: $f failed")
      # The stage's own lines that name what failed: a nested run-tests' list, or else the
      # lines that say FAILED or count failures (its summary line aside).
      if grep -q '^run-tests: what failed:' "$log"; then
        recap=$(sed -n '/^run-tests: what failed:/,/^run-tests: .* in all/{/^  /p}' "$log")
      else
        recap=$(head -n -1 "$log" | grep -E 'FAILED| [1-9][0-9]* failed' | head -n 20)
      fi
      while read -r line; do [[ -n $line ]] && failures+=("  $line"); done <<<"$recap"
    fi
  else
    echo "run-tests: $what ended without its summary line"
    failed=$((failed + 1))
    failures+=("$what: ended without its summary line")
  fi
  rm -f "$log"
}

# MPICH's test suite on Debian 13's MPICH and Open MPI (Open MPI over TCP runs on Debian 12's
# generation). Its source package comes from the Debian mirror. Where the mirror does not serve
# it, the suite of Debian 12's MPICH (fetched by this machine's stage into the same cache) runs
# against both instead, and says so; with neither, the stage is not counted.
debian13_suite() {
  local suite fetch_log other
  suite=(tools/mpich-testsuite.sh --build-mpich build-d13-mpich --build-openmpi build-d13-openmpi
         --configs "$(configs_of "$short_modes")")
  if ! fetch_log=$(tools/mpich-testsuite.sh --fetch-only 2>&1); then
    echo "$fetch_log" | grep -E '^(E:|Err:)' | head -n 3
    other=$(ls -d .cache/mpich-testsuite/mpich-*/.complete 2>/dev/null | sort -V | tail -n 1)
    other=${other%/.complete}
    other=${other##*/mpich-}
    if [[ -z $other ]]; then
      echo "run-tests: NOT RUN: MPICH's test suite on Debian 13 (MPICH 4.2's source package could" \
           "not be fetched from the mirror, and no other MPICH's suite is cached)"
      return
    fi
    echo "run-tests: MPICH 4.2's source package is not on the mirror: running MPICH $other's" \
         "test suite instead"
    suite+=(--source-version "$other")
  fi
  run_counted tools/mpich-testsuite.sh "${suite[@]}"
  run_counted tools/mpich-testsuite.sh "${suite[@]}" --fortran  # its Fortran CI subset too
}

# Debian 13's generation, inside its root: both MPIs' builds and tests, optimised, at the rank
# counts that cover odd counts, janus and size-1 ranges (MPICH at 3, Open MPI at 3 and 5; the
# other counts and the sanitizers run on Debian 12's generation, below); then MPICH's test
# suite and its Fortran CI subset against both, natively and in the accelerate mode. Open MPI 5.0 in the root warns on every multi-rank run that it finds no
# pairing of its network interfaces for TCP (MPICH's suite counts that output as a failure); one
# host needs only the loopback one.
if [[ $stages == inside ]]; then
  export OMPI_MCA_btl_tcp_if_include=lo
  build_and_test build-d13-mpich mpich -Dbenchmarks=false -Dtest_rank_counts=3 -- \
    --no-suite install  # the installation and mpicc-only configuration: on Open MPI 5.0 here
  build_and_test build-d13-openmpi openmpi -Dbenchmarks=false -Dtest_rank_counts=3,5
  if begin_stage "MPICH's tests, C and Fortran, on MPICH 4.2 and Open MPI 5.0 (tools/mpich-testsuite.sh)"
  then
    debian13_suite
    end_stage "MPICH's test suite"
  fi
  # The simulated build (SimGrid 4.0's MPI simulator, sim/): core's and Janus Quicksort's tests
  # and the scaling driver at 1 to 64 simulated processes, about 6 minutes with its build.
  if sim_options=$(tools/simulated.sh options); then
    read -r -a sim_options <<<"$sim_options"
    build_and_test build-sim smpi "${sim_options[@]}" -- --suite sim
  else
    echo "run-tests: the simulated build's setup failed"
    failed=$((failed + 1))
    failures+=("build-sim: setup (tools/simulated.sh)")
  fi
  finish
fi

# Runs the Debian 13 stages in the root and adds up their summary line.
debian13_stages() {
  begin_stage "Debian 13 (MPICH 4.2, Open MPI 5.0): tools/debian13.sh" || return
  run_counted "the Debian 13 stages" tools/debian13.sh run tools/run-tests.sh --inside-debian13
  end_stage "Debian 13, in all"
}

if [[ $stages == debian13 ]]; then
  debian13_stages
  finish
fi

for mpi in mpich openmpi; do
  build_and_test "build-$mpi" "$mpi"
done

# MPICH's own test suite on both builds' librangecomm.so, natively and in the accelerate and
# shadow modes (and Open MPI over TCP): the CI subset, about 4 minutes (docs/mpich-suite.md;
# --full for all of it).
if begin_stage "MPICH's test suite (tools/mpich-testsuite.sh)"; then
  run_counted tools/mpich-testsuite.sh tools/mpich-testsuite.sh \
    --configs "$suite_configs,openmpi-tcp-native,openmpi-tcp-accelerate"
  end_stage "MPICH's test suite"
fi

# MPICH's Fortran tests (f77, f90, f08) the same way: the CI subset of 24, about 2 minutes
# (docs/mpich-suite.md, "Fortran tests"; --full --fortran for all of them).
if begin_stage "MPICH's Fortran tests (tools/mpich-testsuite.sh --fortran)"; then
  run_counted tools/mpich-testsuite.sh tools/mpich-testsuite.sh --fortran --configs "$suite_configs"
  end_stage "MPICH's Fortran tests"
fi

# The libraries applications are built on, their own tests natively and in the accelerate
# mode: PETSc's tutorials and parallel HDF5's testpar programs on both MPIs and DOLFINx's demos
# on Open MPI, the CI selection, about 3.5 minutes (docs/libraries.md; --full for all). PETSc on
# MPICH runs where a PETSc for MPICH is in the machine's cache (Debian builds PETSc on Open MPI
# only; tools/library_tests.py --build-petsc makes it once, 12 minutes, more than this
# command's budget has room for).
if begin_stage "Libraries' own tests (tools/library_tests.py)"; then
  run_counted tools/library_tests.py python3 tools/library_tests.py --modes "$short_modes"
  end_stage "Libraries' own tests"
fi

# The sanitized build: AddressSanitizer with LeakSanitizer, and UndefinedBehaviorSanitizer, on
# Open MPI at 3 ranks (odd, janus and size-1 ranges; the other counts run unsanitized in both
# builds), without the benchmark drivers and the threaded tests. Unoptimised, because the
# sanitizers make -O2 compile six times slower.
# Runtime options and the suppressions of MPI's own leaks: tests/reliability/setup/meson.build.
# To run another suite sanitized, add its name here.
asan_suites=(mpi unit shim conformance)
asan_test_options=(--no-suite threads)  # the threaded tests run under ThreadSanitizer, below
for suite in "${asan_suites[@]}"; do asan_test_options+=(--suite "$suite"); done
build_and_test build-asan openmpi -Db_sanitize=address,undefined -Db_lundef=false \
  -Dbuildtype=debug -Dbenchmarks=false -Dtest_rank_counts=3 -- "${asan_test_options[@]}"

# The ThreadSanitizer build: the threaded tests (suite threads: the threads torture test, two
# threads on ranges, intercommunicators from 4 threads, the library's progress thread) at 1 and
# 2 ranks on Open MPI, every mode, built unoptimised with only what they run. Any report fails the test (the options that
# leave MPI's own uninstrumented code out: tests/reliability/setup/meson.build).
compile_targets=(rangecomm shim_threads_torture_plain shim_threads_torture_linked
                 shim_threads_plain shim_threads_linked shim_suite_intercomm_threads_plain
                 shim_suite_intercomm_threads_linked shim_progress_thread_plain
                 shim_progress_thread_linked)
build_and_test build-tsan openmpi -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug \
  -Dbenchmarks=false -Dtest_rank_counts=1,2 -- --names-matching '[:+]threads / .*-np[12]$'
compile_targets=()

[[ $stages == all ]] && debian13_stages
finish
