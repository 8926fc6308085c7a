#!/usr/bin/env bash
# The paper's experiments at scale, in SimGrid's MPI simulator: sim/scaling.cpp (creation,
# creation + broadcast, collectives, Iscan, first contact, Janus Quicksort; ranges against
# native MPI in the same run, every result checked) at 8 to 4096 simulated processes, in
# simulated time. Writes scaling.csv (experiment,p,variant,parameter,seconds, plus the run's
# settings) and plots into the results folder. Builds build-sim first (tools/simulated.sh; on
# Debian 12 in the Debian 13 root).
#
#   tools/run-scaling.sh [--quick] [--ranks "8 64 256"] [--experiments "create fig7 ..."]
#                        [--jquick-max 256] [--jquick-variants range,native_split]
#                        [--reps 3] [--warmups 1] [--latency 0.75us] [--bandwidth 5GBps]
#                        [--poll-cost 5e-8] [--eager 0] [--computation off|measured]
#                        [--sensitivity] [--results DIR]
#
# --quick: up to 256 processes (under 10 minutes, most of it the sorts at 256). Janus Quicksort
# runs up to 256 processes unless --jquick-max says otherwise: every waiting process polls, and
# the simulator spends its wall time scheduling those polls (all seven variants: under 7
# minutes at 256, 72 at 1024; the sort on ranges alone with --reps 1: 50 s at 512, 3 minutes at
# 1024; a native variant's first sort takes the time of its later ones, so --warmups 0 halves
# its wall time). --jquick-variants runs
# some of range, native_create_group, native_split (SMPI's own creation) and
# model_mpich_create_group, model_mpich_split, model_openmpi_create_group, model_openmpi_split
# (native communicators whose creation sends the messages MPICH's or Open MPI's does;
# docs/scaling.md), or all (the default); --reps sets the timed repetitions, --warmups the
# untimed ones before them.
# The network is the paper's (SuperMUC: 0.75 us, 5 GB/s, a switch that does not limit, no
# acknowledgement traffic); --poll-cost is the simulated time of a failed MPI_Iprobe or MPI_Test
# (measured here: 12-72 ns on Open MPI 4.1 and MPICH 4.0, so 5e-8 by default; SMPI's own default
# is far larger). --eager BYTES sends messages below that size at once, before a receive
# matches them, as MPICH and Open MPI send small messages (smpi/async-small-thresh; 65536 by
# default; at 0, SMPI's default, a message's data moves only when a receive matches it).
# --sensitivity adds runs at 64 processes with other poll costs, this machine's shared-memory
# latency and no eager messages.
# --computation: off (the default) charges no time for computation between MPI calls, as SMPI
# charges none inside its own MPI calls (its native collectives); measured charges each stretch
# as long as it ran here, which under the simulator includes about a microsecond of the
# simulator's own work per stretch (a 46-63 ns range creation measures 0.9-8 us at 8-1024
# simulated processes; docs/scaling.md).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [[ $codename == bookworm || $codename == bullseye ]]; then
  exec tools/debian13.sh run tools/run-scaling.sh "$@"
fi

ranks="8 64 256 1024 4096"
experiments="create fig7 coll iscan contact jquick"
latency=0.75us bandwidth=5GBps poll=5e-8 sensitivity=0 computation=off eager=65536
results=results/scaling-$(date +%Y-%m-%d)
jquick_max=256 jquick_variants=all reps=3 warmups=1
while (( $# > 0 )); do
  case $1 in
    --quick) ranks="8 64 256" ;;
    --jquick-max) jquick_max=$2; shift ;;
    --jquick-variants) jquick_variants=$2; shift ;;
    --reps) reps=$2; shift ;;
    --warmups) warmups=$2; shift ;;
    --ranks) ranks=$2; shift ;;
    --experiments) experiments=$2; shift ;;
    --latency) latency=$2; shift ;;
    --bandwidth) bandwidth=$2; shift ;;
    --poll-cost) poll=$2; shift ;;
    --sensitivity) sensitivity=1 ;;
    --computation) computation=$2; shift ;;
    --eager) eager=$2; shift ;;
    --results) results=$2; shift ;;
    *) sed -n '2,38s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2 ;;
  esac
  shift
done

tools/simulated.sh build build-sim >/dev/null
driver=$top/build-sim/sim/sim_scaling.so
mkdir -p "$results"
csv=$results/scaling.csv
case $computation in
  off) computation_cfg=--cfg=smpi/simulate-computation:no ;;
  measured) computation_cfg=--cfg=smpi/simulate-computation:yes ;;
  *) echo "run-scaling: --computation is off or measured" >&2; exit 2 ;;
esac
echo "experiment,p,variant,parameter,seconds,latency,bandwidth,poll_cost,computation,eager" >"$csv"

run() {  # run P EXPERIMENT LATENCY BANDWIDTH POLL [EAGER]
  local p=$1 experiment=$2 lat=$3 bw=$4 poll_cost=$5 eager_bytes=${6:-$eager} work
  work=$(mktemp -d)
  python3 sim/platform.py "$work" "$p" "$lat" "$bw"
  local start=$SECONDS out
  # Computation (when measured) at the speed it ran here (host speed = the platform's 1
  # Gflop/s); the platform's latency and bandwidth as they are (SMPI's default factors, fitted
  # to another cluster, double a small message's latency); every failed poll the same cost
  # (by default SMPI charges the n-th failed MPI_Test or MPI_Iprobe in a row n times the cost,
  # counting the failed polls of all simulated processes together), and a test call one poll
  # however many requests it tests (RANGECOMM_SIM_TEST_COST, sim/compat/smpi_compat.h); no
  # reverse flow per message (SimGrid's model of TCP's acknowledgements, which an InfiniBand
  # network does not send and which couples every transfer in the network solver); small
  # stacks, as thousands of simulated processes share this machine's memory.
  if ! out=$(RANGECOMM_SIM_TEST_COST=$poll_cost smpirun -np "$p" -platform "$work/platform.xml" -hostfile "$work/hosts" \
               --cfg=smpi/host-speed:1Gf "$computation_cfg" --cfg=smpi/lat-factor:0:1 \
               --cfg=smpi/bw-factor:0:1 --cfg=smpi/iprobe:"$poll_cost" \
               --cfg=smpi/test:0 --cfg=smpi/grow-injected-times:no \
               --cfg=smpi/async-small-thresh:"$eager_bytes" --cfg=network/crosstraffic:0 \
               --cfg=smpi/display-timing:no \
               --cfg=contexts/stack-size:512 --log=root.thres:warning \
               "$driver" "$experiment" --reps "$reps" --warmups "$warmups" --variants "$jquick_variants" \
               2>"$work/err"); then
    echo "run-scaling: $experiment at $p processes failed:"
    tail -n 20 "$work/err"
    rm -rf "$work"
    return 1
  fi
  echo "$out" | sed "s/\$/,$lat,$bw,$poll_cost,$computation,$eager_bytes/" >>"$csv"
  echo "  $experiment, p=$p: $((SECONDS - start)) s"
  rm -rf "$work"
}

status=0
for p in $ranks; do
  for experiment in $experiments; do
    [[ $experiment == jquick ]] && (( p > jquick_max )) && continue
    run "$p" "$experiment" "$latency" "$bandwidth" "$poll" || status=1
  done
done
if (( sensitivity )); then
  for poll_cost in 1e-8 1e-6; do
    for experiment in fig7 jquick; do run 64 "$experiment" "$latency" "$bandwidth" "$poll_cost" || status=1; done
  done
  # This machine's shared memory: MPICH's one-byte one-way latency and Open MPI's 64 KiB message
  # rate measured here (docs/benchmarks.md, point-to-point latency).
  for experiment in fig7 jquick; do run 64 "$experiment" 0.3us 5.7GBps "$poll" || status=1; done
  for experiment in fig7 jquick; do
    run 64 "$experiment" "$latency" "$bandwidth" "$poll" 0 || status=1
  done
fi
python3 tools/scaling_plots.py "$csv" "$results" || status=1
echo "run-scaling: $csv"
exit $status
