#!/usr/bin/env bash
# Runs the threads torture test (tests/shim/threads_torture.c) again and again, a new seed each
# run, in every configuration of one build: natively, and linked and preloaded in each mode.
# Prints a line per configuration, "<passed> passed, <failed> failed", and each failing seed
# with the command that repeats it; the last line sums them up. A run under the library whose
# per-rank digests of checked values (its transcript) differ from the native run of the same
# seed and rank count fails too.
#
#   tools/soak-threads.sh BUILD_DIR [--runs N] [--ranks "1 2 3"] [--threads T]
#                         [--iterations I] [--modes "native off accelerate shadow"]
#                         [--first-seed S]
#
# Defaults: 100 runs, ranks 2 and 3 (MPICH: 2), 3 threads, 40 iterations, seeds from 1.
# A run that takes more than 120 s counts as failed (a hang).
set -uo pipefail
(( $# >= 1 )) || { sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
runs=100 ranks='' threads=3 iterations=40 modes='native off accelerate shadow' first=1
while (( $# > 0 )); do
  case $1 in
    --runs) runs=$2 ;;
    --ranks) ranks=$2 ;;
    --threads) threads=$2 ;;
    --iterations) iterations=$2 ;;
    --modes) modes=$2 ;;
    --first-seed) first=$2 ;;
    *) echo "soak-threads: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done

mpi=$(python3 - "$build/meson-info/intro-buildoptions.json" <<'PY'
import json, sys
print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "mpi"))
PY
)
launcher=(mpiexec.mpich)
if [[ $mpi == openmpi ]]; then
  launcher=(mpiexec.openmpi --oversubscribe --bind-to none)
  (( $(id -u) == 0 )) && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
[[ -n $ranks ]] || ranks=$([[ $mpi == mpich ]] && echo 2 || echo "2 3")
plain=$build/tests/shim/shim_threads_torture_plain
linked=$build/tests/shim/shim_threads_torture_linked
library=$build/shim/librangecomm.so
[[ -x $plain && -x $linked ]] || { echo "soak-threads: build $build first"; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total_passed=0 total_failed=0
for mode in $modes; do
  kinds=(linked preloaded)
  [[ $mode == native ]] && kinds=(native)
  for kind in "${kinds[@]}"; do
    for np in $ranks; do
      passed=0 failed=0 start=$SECONDS
      for (( seed = first; seed < first + runs; ++seed )); do
        transcript=$work/$mode-$kind-$np-$seed native=$work/native-native-$np-$seed
        mkdir -p "$transcript"
        program=$plain env=(RANGECOMM_MODE=off SHIM_TRANSCRIPT="$transcript")
        [[ $kind == linked ]] && program=$linked
        [[ $mode != native ]] && env=(RANGECOMM_MODE="$mode" SHIM_TRANSCRIPT="$transcript")
        [[ $kind == preloaded ]] && env+=(LD_PRELOAD="$library")
        command=(env "${env[@]}" "${launcher[@]}" -n "$np" "$program" --threads "$threads"
                 --iterations "$iterations" --seed "$seed")
        if [[ $mpi == openmpi ]]; then
          # Open MPI passes only the variables named with -x to the ranks.
          command=("${launcher[@]}" -n "$np")
          for e in "${env[@]}"; do command+=(-x "$e"); done
          command+=("$program" --threads "$threads" --iterations "$iterations" --seed "$seed")
        fi
        if out=$(timeout 120 "${command[@]}" 2>&1) && grep -q ': passed$' <<<"$out" &&
           { [[ $mode == native || ! -d $native ]] ||
             out=$(diff -r "$native" "$transcript" 2>&1); }; then
          passed=$((passed + 1))
        else
          failed=$((failed + 1))
          echo "  FAILED seed $seed: ${command[*]}"
          grep -E 'CHECK|signal|rror|^[<>] ' <<<"$out" | head -n 3 | sed 's/^/    /'
        fi
      done
      printf '%-10s %-9s np %d: %d passed, %d failed (%d s)\n' "$mode" "$kind" "$np" "$passed" \
        "$failed" $((SECONDS - start))
      total_passed=$((total_passed + passed))
      total_failed=$((total_failed + failed))
    done
  done
done
echo "$total_passed passed, $total_failed failed"
(( total_failed == 0 ))
