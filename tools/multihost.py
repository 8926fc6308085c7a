#!/usr/bin/env python3
"""Runs the project's multi-rank programs with their ranks spread over several hosts of one
machine (tools/hosts.sh: network namespaces with host names of their own), started by each
MPI's own remote launcher (Open MPI's mpirun with a hostfile and its rsh agent, MPICH's Hydra
with its ssh launcher), natively and through rangecomm-run in each mode, and compares every
run under the library with the native one. Needs root (the hosts); brings them up and down
itself.

  tools/multihost.py [--build-openmpi DIR] [--build-mpich DIR] [--mpis openmpi,mpich]
                     [--modes off,accelerate,shadow] [--placements P;Q] [--programs A,B]
                     [--timeout S] [--keep-hosts]

A placement is the ranks on each host, e.g. `2,2` (two hosts, two ranks each) or `1,2`;
defaults: Open MPI `2,2;1,2;2,2,2`, MPICH `2,2;1,2;1,1,1` (MPICH busy-polls: at most 4 ranks
on 2 cores). Programs: the shim's plain MPI test programs, whose per-rank transcripts
(SHIM_TRANSCRIPT) must equal a native run's; its programs of the library's own calls, which
check every result themselves; and core's differential conformance test and randomized torture
test, which do too. The remote hosts' ranks get only what the launcher carries
(the agent starts them with a login's environment, as ssh does), so rangecomm-run's -x / -genv
are what brings the library to them. Prints a line per run and ends with "N passed, N failed".
"""
import argparse
import difflib
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / 'tools' / 'hosts.sh'
AGENT = ROOT / 'tools' / 'hosts-agent'

# Plain MPI programs of tests/shim whose per-rank transcripts must equal the native run's.
COMPARED = ['passthrough', 'suite_regressions', 'library_patterns', 'creation_order',
            'finalize_progress', 'progress_across', 'suite_intercomm_threads']
# Programs of tests/shim that call the library's MPIX_ functions and check every result
# themselves: run through rangecomm-run only, in mode off.
LIBRARY_ONLY = ['range_coll', 'range_p2p', 'range_comm', 'range_requests', 'range_families',
                'range_fallback', 'range_mpix']
# accelerate.c: what becomes a library communicator under the acceleration modes, checked by
# the program itself (with fewer live communicators than the test command's).
ACCELERATED = {'accelerate': {'SHIM_TEST_SELF_DUPS': '2000', 'SHIM_TEST_WORLD_COMMS': '200',
                              'SHIM_TEST_FILES': '20'}}
SELF_CHECKING = {
    'conformance': ['tests/conformance/conformance', '--seed', '5', '--cases', '300'],
    'torture': ['tests/test_rel_torture'],
}
DEFAULT_PLACEMENTS = {'openmpi': '2,2;1,2;2,2,2', 'mpich': '2,2;1,2;1,1,1'}
# MPICH 4.0.2 across hosts that hold different numbers of ranks computes MPI_Reduce with
# MPI_LAND or MPI_BAND wrongly from about 4 KiB (a plain-MPI program shows it: docs/hosts.md);
# the conformance test then finds the library's (correct) result different from MPI's. Such a
# run counts as that known defect when every mismatch it reports is one of these.
KNOWN_NATIVE = {('mpich', 'conformance'): re.compile(r'op \d+: MPI_Reduce root \d+, MPI_(LAND|BAND) ')}


def launcher(mpi, placement, env):
    """The launcher's command line, run on the first host, for ranks placed as given."""
    if mpi == 'openmpi':
        hostfile = Path(tempfile.gettempdir()) / ('rc-hostfile-' + '-'.join(map(str, placement)))
        hostfile.write_text(''.join('rc-h%d slots=%d\n' % (i + 1, n)
                                    for i, n in enumerate(placement)))
        cmd = ['mpirun.openmpi', '--hostfile', str(hostfile), '--mca', 'plm_rsh_agent',
               '%s agent' % HOSTS, '-np', str(sum(placement))]
        for k, v in env.items():
            cmd += ['-x', '%s=%s' % (k, v)]
        return cmd
    hosts = ','.join('rc-h%d:%d' % (i + 1, n) for i, n in enumerate(placement))
    cmd = ['mpiexec.mpich', '-hosts', hosts, '-launcher', 'ssh', '-launcher-exec', str(AGENT),
           '-n', str(sum(placement))]
    for k, v in env.items():
        cmd += ['-genv', k, v]
    return cmd


def run_on_first_host(cmd, timeout):
    full = [str(HOSTS), 'on', 'rc-h1'] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    proc = subprocess.Popen(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True, errors='replace')
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out


def library_prefix(build, mode):
    return [str(Path(build) / 'shim' / 'rangecomm-run'), '--library',
            str(Path(build) / 'shim' / 'librangecomm.so'), '--mode', mode, '--']


def transcript_difference(native, other):
    """'' when the per-rank transcripts are the same, else the first difference."""
    names = sorted(os.listdir(native))
    if names != sorted(os.listdir(other)) or not names:
        return 'transcripts of ranks %s against %s natively' % (sorted(os.listdir(other)), names)
    for n in names:
        a, b = (Path(d, n).read_text(errors='replace').splitlines() for d in (native, other))
        if a != b:
            diff = difflib.unified_diff(a, b, 'native/' + n, 'library/' + n, lineterm='', n=1)
            return '\n'.join(list(diff)[:30])
    return ''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build-openmpi', default=str(ROOT / 'build-openmpi'))
    ap.add_argument('--build-mpich', default=str(ROOT / 'build-mpich'))
    ap.add_argument('--mpis', default='openmpi,mpich')
    ap.add_argument('--modes', default='off,accelerate,shadow')
    ap.add_argument('--placements', default='')
    ap.add_argument('--programs', default=','.join(COMPARED + LIBRARY_ONLY + list(ACCELERATED) +
                                                   list(SELF_CHECKING)))
    ap.add_argument('--timeout', type=float, default=180)
    ap.add_argument('--keep-hosts', action='store_true')
    args = ap.parse_args()
    if os.geteuid() != 0:
        print('multihost: needs root (network namespaces)')
        print('0 passed, 1 failed')
        return 1
    mpis = args.mpis.split(',')
    modes = args.modes.split(',')
    programs = args.programs.split(',')
    passed = failed = 0
    failures = []
    most_hosts = 0
    plans = {}
    for mpi in mpis:
        text = args.placements or DEFAULT_PLACEMENTS[mpi]
        plans[mpi] = [tuple(int(n) for n in p.split(',')) for p in text.split(';')]
        most_hosts = max([most_hosts] + [len(p) for p in plans[mpi]])
    subprocess.run([str(HOSTS), 'up', str(max(most_hosts, 2))], check=True,
                   stdout=subprocess.DEVNULL)
    try:
        for mpi in mpis:
            build = Path(args.build_openmpi if mpi == 'openmpi' else args.build_mpich)
            for placement in plans[mpi]:
                where = '%s on %d hosts (%s)' % (mpi, len(placement),
                                                 '+'.join(map(str, placement)))
                for program in programs:
                    results = run_program(build, mpi, placement, program, modes, args.timeout)
                    for label, ok, output in results:
                        line = '%s: %s, %s' % ('ok' if ok else 'FAILED', where,
                                                 program + (' ' + label if label else ''))
                        print(line, flush=True)
                        if ok:
                            passed += 1
                        else:
                            failed += 1
                            failures.append((line, output))
    finally:
        if not args.keep_hosts:
            subprocess.run([str(HOSTS), 'down'])
    for line, output in failures:
        print('----', line)
        print('\n'.join(output.splitlines()[-40:]))
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


def run_program(build, mpi, placement, program, modes, timeout):
    """[(label, ok, output)] for one program at one placement."""
    if program in SELF_CHECKING:
        cmd = [str(build / SELF_CHECKING[program][0])] + SELF_CHECKING[program][1:]
        rc, out = run_on_first_host(launcher(mpi, placement, {}) + cmd, timeout)
        known = KNOWN_NATIVE.get((mpi, program))
        if rc not in (0, None) and known and len(set(placement)) > 1:
            ops = [line for line in out.splitlines() if re.match(r'\s+op \d+: ', line)]
            mismatches = out.count('MISMATCH')
            if mismatches and all(known.search(line) for line in ops):
                return [('(known MPICH defect: %d case(s) of MPI_Reduce with MPI_LAND/MPI_BAND)'
                         % mismatches, True, out)]
        return [('', rc == 0, out if rc is not None else out + '\n(hung: killed)')]
    plain = build / 'tests' / 'shim' / ('shim_%s_plain' % program)
    if not plain.exists():
        return [('', False, 'no program %s (build %s first)' % (plain, build))]
    if program in ACCELERATED:
        results = []
        for mode in [m for m in modes if m != 'off']:
            env = dict(ACCELERATED[program], SHIM_EXPECT='shim')
            cmd = library_prefix(build, mode) + launcher(mpi, placement, env) + [str(plain)]
            rc, out = run_on_first_host(cmd, timeout)
            results.append((mode, rc == 0, out if rc is not None else out + '\n(hung: killed)'))
        return results
    if program in LIBRARY_ONLY:
        env = {'SHIM_EXPECT': 'shim'}
        cmd = library_prefix(build, 'off') + launcher(mpi, placement, env) + [str(plain)]
        rc, out = run_on_first_host(cmd, timeout)
        return [('', rc == 0, out if rc is not None else out + '\n(hung: killed)')]
    results = []
    # Each mode's run is compared with a native run that sees the same RANGECOMM_MODE (some
    # programs read it, as the test command's native runs do).
    with tempfile.TemporaryDirectory() as tmp:  # the hosts share the machine's file systems
        for mode in modes:
            native, directory = os.path.join(tmp, mode + '-native'), os.path.join(tmp, mode)
            os.mkdir(native)
            os.mkdir(directory)
            env = {'SHIM_EXPECT': 'none', 'SHIM_TRANSCRIPT': native, 'RANGECOMM_MODE': mode}
            rc, out = run_on_first_host(launcher(mpi, placement, env) + [str(plain)], timeout)
            if rc != 0:
                results.append(('natively (%s)' % mode, False,
                                out if rc is not None else out + '\n(hung: killed)'))
                continue
            env = {'SHIM_EXPECT': 'shim', 'SHIM_TRANSCRIPT': directory}
            cmd = library_prefix(build, mode) + launcher(mpi, placement, env) + [str(plain)]
            rc, out = run_on_first_host(cmd, timeout)
            if rc is None:
                results.append((mode, False, out + '\n(hung: killed)'))
            elif rc != 0:
                results.append((mode, False, out))
            elif transcript_difference(native, directory):
                results.append((mode, False, out + '\ntranscripts differ from the native run:\n' +
                                transcript_difference(native, directory)))
            else:
                results.append((mode, True, out))
    return results


if __name__ == '__main__':
    sys.exit(main())
