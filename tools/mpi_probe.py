#!/usr/bin/env python3
"""Finds the MPI a build uses the way HPC builds do: through the `mpicc` on PATH (or $MPICC).

Prints `key=value` lines for meson.build:
  family=openmpi|mpich   the handle ABI, from the macros mpi.h defines (Open MPI: pointers;
                         MPICH and the MPIs built on it, Intel MPI, MVAPICH, Cray MPICH: ints)
  name=...               what the MPI calls itself, with its version
  compile=...            the wrapper's compile flags (shell words)
  link=...               the wrapper's link flags (shell words)
  mpiexec=PATH           the launcher beside mpicc (or on PATH)
  mpicc=PATH             the wrapper itself, and its C++ sibling (mpicxx=PATH, empty when
                         there is none beside it): recorded for CMake users of the install
  launcher=openmpi|hydra|other   what `mpiexec --version` says it is

Usage: mpi_probe.py [--mpicc MPICC]
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys

# The first macro mpi.h defines decides the family; the rest name the MPI.
FAMILIES = [
    ('OPEN_MPI', 'openmpi', 'Open MPI {OMPI_MAJOR_VERSION}.{OMPI_MINOR_VERSION}.'
                            '{OMPI_RELEASE_VERSION}'),
    ('I_MPI_VERSION', 'mpich', 'Intel MPI {I_MPI_VERSION}'),
    ('MVAPICH2_VERSION', 'mpich', 'MVAPICH {MVAPICH2_VERSION}'),
    ('MVAPICH_VERSION', 'mpich', 'MVAPICH {MVAPICH_VERSION}'),
    ('MPICH_VERSION', 'mpich', 'MPICH {MPICH_VERSION}'),
]
MACROS = ['OPEN_MPI', 'OMPI_MAJOR_VERSION', 'OMPI_MINOR_VERSION', 'OMPI_RELEASE_VERSION',
          'I_MPI_VERSION', 'MVAPICH2_VERSION', 'MVAPICH_VERSION', 'MPICH_VERSION']


def fail(message):
    print('mpi_probe: ' + message, file=sys.stderr)
    sys.exit(1)


def run(cmd):
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def wrapper_flags(mpicc):
    """(compile, link) flags of the wrapper, without the compiler it wraps."""
    compile_, link = run([mpicc, '--showme:compile']), run([mpicc, '--showme:link'])
    if compile_ is not None and link is not None:  # Open MPI
        return shlex.split(compile_), shlex.split(link)
    show = run([mpicc, '-show']) or run([mpicc, '-showme'])  # MPICH family, Intel MPI
    if show is None:
        fail('{} tells neither --showme:compile nor -show: not an MPI compiler wrapper?'
             .format(mpicc))
    words = shlex.split(show)[1:]  # the first word is the wrapped compiler
    compile_ = [w for w in words if w.startswith(('-I', '-D', '-isystem'))]
    link = [w for w in words if w not in compile_ and w not in ('-c',)]
    return compile_, link


def header_macros(cc, compile_):
    source = '#include <mpi.h>\n' + ''.join(
        '#ifdef {0}\nrc_probe "{0}" {0}\n#endif\n'.format(m) for m in MACROS)
    try:
        out = subprocess.run(shlex.split(cc) + ['-E', '-P', '-xc'] + compile_ + ['-'],
                             input=source, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail('cannot preprocess mpi.h with {} {}: {}'.format(cc, ' '.join(compile_), e))
    values = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] == 'rc_probe':
            values[parts[1].strip('"')] = parts[2].strip().strip('"')
    return values


def launcher_kind(mpiexec):
    text = (run([mpiexec, '--version']) or '') + (run([mpiexec, '-info']) or '')
    if 'Open MPI' in text or 'OpenRTE' in text or 'PRRTE' in text:
        return 'openmpi'
    if 'HYDRA' in text or 'Hydra' in text or 'Intel(R) MPI' in text:
        return 'hydra'
    return 'other'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--mpicc', default=os.environ.get('MPICC', 'mpicc'))
    ap.add_argument('--cc', default=os.environ.get('CC', 'cc'),
                    help='the compiler that preprocesses mpi.h')
    opts = ap.parse_args()
    mpicc = shutil.which(opts.mpicc)
    if mpicc is None:
        fail('no {} on PATH (set MPICC, load an MPI module, or pass -Dmpi=mpich|openmpi)'
             .format(opts.mpicc))
    compile_, link = wrapper_flags(mpicc)
    macros = header_macros(opts.cc, compile_)
    family = name = None
    for macro, fam, text in FAMILIES:
        if macro in macros:
            family = fam
            try:
                name = text.format(**macros)
            except KeyError:
                name = '{} ({})'.format(fam, macro)
            break
    if family is None:
        fail('the mpi.h of {} is neither Open MPI nor of the MPICH family'.format(mpicc))
    # The launcher: named like the wrapper (mpicc.mpich -> mpiexec.mpich), beside it, or on
    # PATH; the first whose --version names the same family.
    base = os.path.basename(opts.mpicc)
    suffix = base[len('mpicc'):] if base.startswith('mpicc') else ''
    dirs = [os.path.dirname(mpicc), os.path.dirname(os.path.realpath(mpicc))]
    candidates = [os.path.join(d, n) for n in ('mpiexec' + suffix, 'mpirun' + suffix)
                  for d in dirs if suffix]
    candidates += [os.path.join(d, 'mpiexec') for d in dirs]
    candidates += [shutil.which('mpiexec' + suffix), shutil.which('mpiexec'),
                   shutil.which('mpirun')]
    expected = {'openmpi': 'openmpi', 'mpich': 'hydra'}[family]
    found = []
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and candidate not in found:
            found.append(candidate)
    kinds = [(c, launcher_kind(c)) for c in found]
    chosen = next(((c, k) for c, k in kinds if k == expected), None)
    chosen = chosen or next(((c, k) for c, k in kinds if k == 'other'), None)
    if chosen is None:
        fail('no launcher for {} ({}) beside it or on PATH: found {}'.format(
            mpicc, name, ', '.join('{} ({})'.format(c, k) for c, k in kinds) or 'none'))
    mpiexec, launcher = chosen
    print('family=' + family)
    print('name=' + name)
    print('compile=' + ' '.join(shlex.quote(w) for w in compile_))
    print('link=' + ' '.join(shlex.quote(w) for w in link))
    print('mpiexec=' + mpiexec)
    print('mpicc=' + mpicc)
    siblings = [os.path.join(d, n + suffix) for d in dirs for n in ('mpicxx', 'mpic++', 'mpiCC')]
    print('mpicxx=' + next((c for c in siblings if os.access(c, os.X_OK)), ''))
    print('launcher=' + launcher)


if __name__ == '__main__':
    main()
