#!/usr/bin/env python3
"""Runs one shim test program under mpiexec: linked with librangecomm.so, and the plain build
under LD_PRELOAD; in 'compare' mode also the plain build without the library, and the
per-rank transcripts of the three runs must be identical; in 'fatal' mode every run must fail
(non-zero exit) with the shim's fatal-error message and without the program's line saying
that the erroneous call returned.

Usage: run_shim_test.py run|compare|fatal NP PLAIN LINKED LIBRANGECOMM -- MPIEXEC [ARGS...]

A hang is a failure with evidence: when the runs have not finished RANGECOMM_TEST_WATCHDOG
seconds (default 100, within meson's 120) after the driver started, it prints the stack of every
thread of every process of the job still running (gdb), then ends the job.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE = time.monotonic() + float(os.environ.get('RANGECOMM_TEST_WATCHDOG', '100'))
LAUNCHERS = {'mpiexec', 'mpirun', 'orterun', 'prterun', 'prted', 'orted', 'hydra_pmi_proxy',
             'mpiexec.hydra', 'mpiexec.mpich', 'mpiexec.openmpi', 'mpirun.openmpi', 'env'}


def descendants(root):
    """The processes below root, from /proc: (pid, command name) in pid order."""
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        ppid = int(stat[stat.rindex(')') + 2:].split()[1])
        children.setdefault(ppid, []).append((int(entry), name))
    found, todo = [], [root]
    while todo:
        for pid, name in children.get(todo.pop(), []):
            found.append((pid, name))
            todo.append(pid)
    return sorted(found)


def print_stacks(root):
    """Every thread's stack of each process of the job that is not a launcher."""
    gdb = shutil.which('gdb')
    for pid, name in descendants(root):
        if name in LAUNCHERS or name.startswith('python'):
            continue
        print('---- stacks of process %d (%s)' % (pid, name), flush=True)
        if gdb is None:
            print('(no gdb on this machine)', flush=True)
            continue
        try:
            subprocess.run([gdb, '-q', '-batch', '-p', str(pid), '-ex', 'thread apply all bt 30'],
                           timeout=20, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print('(gdb did not answer within 20 s)', flush=True)


def run_watched(cmd, env, label, **kwargs):
    """subprocess.run under the watchdog; None when it hung (stacks printed, job ended)."""
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=max(1.0, DEADLINE - time.monotonic()))
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        print('HUNG:', label, 'had not finished when the watchdog ran out; the stacks of its'
              ' processes follow', flush=True)
        print_stacks(proc.pid)
        for pid, _ in descendants(proc.pid):  # ranks a launcher put in groups of their own too
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        for text in (out, err):
            if text:
                print(text if isinstance(text, str) else text.decode(errors='replace'))
        return None


def run(label, mpiexec, np, command, expect, transcript):
    env = dict(os.environ, SHIM_EXPECT=expect, SHIM_TRANSCRIPT=transcript)
    cmd = mpiexec + ['-n', str(np)] + command
    print('==', label + ':', ' '.join(cmd), flush=True)
    result = run_watched(cmd, env, label)
    if result is None:
        print('FAILED:', label, 'hung', flush=True)
        return False
    if result.returncode != 0:
        print('FAILED:', label, 'exited with', result.returncode, flush=True)
        return False
    return True


FATAL_MESSAGE = 'rangecomm: fatal error on range communicator'


def run_fatal(label, mpiexec, np, command):
    cmd = mpiexec + ['-n', str(np)] + command
    print('==', label + ' (must abort):', ' '.join(cmd), flush=True)
    result = run_watched(cmd, dict(os.environ, SHIM_EXPECT='shim'), label, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result is None:
        print('FAILED:', label, 'hung', flush=True)
        return False
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
