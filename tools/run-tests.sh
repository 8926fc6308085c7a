#!/usr/bin/env bash
# Installs what is missing, builds the MPICH and Open MPI variants and runs every test in both.
# The last line is always "N passed, N failed" summed over both builds (a build that fails counts
# as one failed test); the exit status is nonzero if anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

passed=0
failed=0

finish() {
  echo "$passed passed, $failed failed"
  (( failed == 0 ))
  exit
}

# Configures $1 for MPI $2 (or reconfigures it, so option and meson.build changes apply).
configure() {
  local dir=$1 options=(-Dmpi="$2") log
  [[ ${CI:-} == true ]] && options+=(-Db_colorout=never)
  if [[ -f $dir/meson-private/coredata.dat ]]; then
    log=$(meson setup --reconfigure "$dir" "${options[@]}" 2>&1) ||
      log=$(meson setup --wipe "$dir" "${options[@]}" 2>&1)
  else
    log=$(meson setup "$dir" "${options[@]}" 2>&1)
  fi || { echo "$log" | tail -n 40; return 1; }
}

# Prints "<passed> <failed>" from meson's test log, and the log tail of each failed test.
summarize() {
  python3 - "$1" <<'PY'
import json, sys
passed = failed = 0
with open(sys.argv[1]) as log:
    for line in log:
        test = json.loads(line)
        if test["result"] in ("OK", "EXPECTEDFAIL", "SKIP"):
            passed += test["result"] != "SKIP"
            continue
        failed += 1
        output = (test.get("stdout") or "") + (test.get("stderr") or "")
        tail = output.rstrip("\n").splitlines()[-40:]
        print(f"---- {test['name']}: {test['result']} (last {len(tail)} lines of its output)",
              file=sys.stderr)
        for text in tail:
            print("  | " + text, file=sys.stderr)
print(passed, failed)
PY
}

tools/setup.sh || { echo "run-tests: installing the requirements failed"; failed=1; finish; }

if (( $(id -u) == 0 )); then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if [[ ${CI:-} == true ]]; then
  export TERM=dumb NO_COLOR=1  # plain logs: meson and Catch colour only real terminals anyway
fi

for mpi in mpich openmpi; do
  dir=build-$mpi
  echo "== $dir: configure and build"
  if ! configure "$dir" "$mpi" || ! meson compile -C "$dir"; then
    echo "run-tests: the $mpi build failed"
    failed=$((failed + 1))
    continue
  fi

  echo "== $dir: test"
  testlog=$dir/meson-logs/testlog.json
  rm -f "$testlog"
  meson test -C "$dir" --no-rebuild
  status=$?
  p='' f=''
  [[ -f $testlog ]] && read -r p f < <(summarize "$testlog")
  if [[ -z $f ]]; then
    echo "run-tests: no test log in $dir"
    p=0 f=1
  elif (( status != 0 && f == 0 )); then
    echo "run-tests: meson test exited with status $status in $dir"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
done

finish
