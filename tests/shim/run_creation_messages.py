#!/usr/bin/env python3
"""Runs creation_messages under mpiexec with librangecomm.so and count_mpi preloaded, in one
RANGECOMM_MODE, with RANGECOMM_REPORT=1, and checks that the program passed and that the
report at MPI_Finalize gives, for every creation call, the number of communicators the program
made: all in the library (accelerate, shadow), or all through MPI because the mode is off.

Usage: run_creation_messages.py MODE NP PROGRAM LIBRANGECOMM LIBCOUNT -- MPIEXEC [ARGS...]
"""

import os
import re
import subprocess
import sys


def main():
    sep = sys.argv.index('--')
    mode, np, program, library, counter = sys.argv[1:sep]
    mpiexec = sys.argv[sep + 1:]
    preload = os.path.abspath(library) + ':' + os.path.abspath(counter)
    cmd = mpiexec + ['-n', np, 'env', 'LD_PRELOAD=' + preload, 'RANGECOMM_MODE=' + mode,
                     'RANGECOMM_REPORT=1', os.path.abspath(program)]
    print('==', ' '.join(cmd), flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
    output = result.stdout + result.stderr
    print(output, flush=True)
    problems = []
    if result.returncode != 0:
        problems.append('exited with status %d' % result.returncode)
    if not re.search(r'^passed: 0 failures$', result.stdout, re.M):
        problems.append('the program did not pass')
    expected = re.findall(r'^expect (\S+) (\d+)$', result.stdout, re.M)
    if not expected:
        problems.append('no expectations printed')
    reports = result.stderr.count('rangecomm report:')
    if reports != 1:
        problems.append('%d reports instead of one' % reports)
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)), m.group(4).strip())
            for m in re.finditer(r'^  (MPIX?_\S+) +(\d+) +(\d+)  ?(.*)$', result.stderr, re.M)}
    for call, count in expected:
        count = int(count)
        if call not in rows:
            problems.append('no report row for %s' % call)
            continue
        library, through_mpi, why = rows[call]
        if mode == 'off':
            ok = library == 0 and through_mpi == count and 'RANGECOMM_MODE is off' in why
        else:
            ok = library == count and through_mpi == 0
        if not ok:
            problems.append('report row %s: library %d, MPI %d (%s); the program made %d' %
                            (call, library, through_mpi, why, count))
    for p in problems:
        print('FAILED:', p, flush=True)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
