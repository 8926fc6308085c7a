#!/usr/bin/env python3
"""The build finds an MPI known only through its compiler wrapper, as on a cluster after
`module load`: a directory holding nothing but `mpicc` and `mpiexec` (links to one MPI's) goes
first on PATH, and `meson setup` runs without -Dmpi. The configuration must name that MPI and
its launcher, and librangecomm.so must build and link against that MPI's library.

Usage: check_auto_mpi.py --meson MESON --source DIR --mpicc WRAPPER --mpiexec LAUNCHER
                         --family openmpi|mpich
"""

import argparse
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--meson', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--mpicc', required=True)
    ap.add_argument('--mpiexec', required=True)
    ap.add_argument('--family', required=True)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bindir = os.path.join(tmp, 'modules', 'mpi', 'bin')
        os.makedirs(bindir)
        os.symlink(opts.mpicc, os.path.join(bindir, 'mpicc'))
        os.symlink(opts.mpiexec, os.path.join(bindir, 'mpiexec'))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ['PATH'])
        env.pop('MPICC', None)
        build = os.path.join(tmp, 'build')
        setup = subprocess.run(
            [opts.meson, 'setup', build, opts.source, '-Dtests=false', '-Dbenchmarks=false',
             '-Dbuildtype=debug', '-Doptimization=0'],
            env=env, capture_output=True, text=True)
        out = setup.stdout + setup.stderr
        if setup.returncode != 0:
            print(out[-4000:])
            print('FAIL: meson setup without -Dmpi failed with only mpicc on PATH')
            return 1
        line = next((l for l in out.splitlines() if 'Message: MPI: ' in l), '')
        expected = {'openmpi': 'Open MPI', 'mpich': 'MPICH'}[opts.family]
        problems = []
        if expected not in line or os.path.join(bindir, 'mpiexec') not in line:
            problems.append('the configuration names "{}", expected {} launched by {}'.format(
                line.strip(), expected, os.path.join(bindir, 'mpiexec')))
        built = subprocess.run([opts.meson, 'compile', '-C', build, 'shim/rangecomm:shared_library'],
                               env=env, capture_output=True, text=True)
        if built.returncode != 0:
            print((built.stdout + built.stderr)[-4000:])
            problems.append('librangecomm.so does not build against the mpicc on PATH')
        else:
            ldd = subprocess.run(['ldd', os.path.join(build, 'shim', 'librangecomm.so')],
                                 capture_output=True, text=True).stdout
            lib = {'openmpi': 'libmpi.so', 'mpich': 'libmpich.so'}[opts.family]
            if lib not in ldd:
                problems.append('librangecomm.so does not link {}:\n{}'.format(lib, ldd))
        for p in problems:
            print('FAIL: ' + p)
        if not problems:
            print('ok: {} found through mpicc alone, librangecomm.so built against it'.format(
                line.split('MPI: ', 1)[1].strip()))
        return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
