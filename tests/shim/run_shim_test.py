#!/usr/bin/env python3
"""Runs one shim test program under mpiexec: linked with librangecomm.so, and the plain build
under LD_PRELOAD; in 'compare' mode also the plain build without the library, and the
per-rank transcripts of the three runs must be identical; in 'fatal' mode every run must fail
(non-zero exit) with the shim's fatal-error message and without the program's line saying
that the erroneous call returned.

Usage: run_shim_test.py run|compare|fatal NP PLAIN LINKED LIBRANGECOMM -- MPIEXEC [ARGS...]
"""

import os
import subprocess
import sys
import tempfile


def run(label, mpiexec, np, command, expect, transcript):
    env = dict(os.environ, SHIM_EXPECT=expect, SHIM_TRANSCRIPT=transcript)
    cmd = mpiexec + ['-n', str(np)] + command
    print('==', label + ':', ' '.join(cmd), flush=True)
    result = subprocess.run(cmd, env=env)
    if result.returncode != 0:
        print('FAILED:', label, 'exited with', result.returncode, flush=True)
        return False
    return True


FATAL_MESSAGE = 'rangecomm: fatal error on range communicator'


def run_fatal(label, mpiexec, np, command):
    cmd = mpiexec + ['-n', str(np)] + command
    print('==', label + ' (must abort):', ' '.join(cmd), flush=True)
    result = subprocess.run(cmd, env=dict(os.environ, SHIM_EXPECT='shim'), capture_output=True,
                            text=True, timeout=60)
    output = result.stdout + result.stderr
    print(output, flush=True)
    problems = []
    if result.returncode == 0:
        problems.append('exited with status 0')
    if FATAL_MESSAGE not in output:
        problems.append('no line "%s"' % FATAL_MESSAGE)
    if 'the erroneous call returned' in output or 'passed the final barrier' in output:
        problems.append('the program went on after the fatal error')
    for p in problems:
        print('FAILED:', label, p, flush=True)
    return not problems


def transcripts(directory):
    found = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name)) as f:
            found[name] = f.read()
    return found


def main():
    sep = sys.argv.index('--')
    mode, np, plain, linked, library = sys.argv[1:sep]
    plain, linked, library = (os.path.abspath(p) for p in (plain, linked, library))
    mpiexec = sys.argv[sep + 1:]
    runs = [('linked', [linked], 'shim'),
            ('LD_PRELOAD', ['env', 'LD_PRELOAD=' + library, plain], 'shim')]
    if mode == 'fatal':
        ok = [run_fatal(label, mpiexec, np, command) for label, command, _ in runs]
        return 0 if all(ok) else 1
    if mode == 'compare':
        runs.insert(0, ('without the library', [plain], 'none'))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, command, expect in runs:
            directory = os.path.join(tmp, label.replace(' ', '_'))
            os.mkdir(directory)
            if not run(label, mpiexec, np, command, expect, directory):
                return 1
            results[label] = transcripts(directory)
    if mode == 'compare':
        reference = results['without the library']
        if len(reference) != int(np):
            print('FAILED: expected', np, 'transcripts, got', len(reference))
            return 1
        for label, found in results.items():
            if found != reference:
                for name in sorted(set(found) | set(reference)):
                    if found.get(name) != reference.get(name):
                        print('FAILED:', label, 'differs in', name)
                        print('--- without the library:\n' + reference.get(name, '(missing)'))
                        print('--- ' + label + ':\n' + found.get(name, '(missing)'))
                return 1
        print('identical transcripts of', len(reference), 'ranks in', len(results), 'runs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
