#!/usr/bin/env python3
"""Fails when librangecomm.so misses a handle-taking function of the real MPI library.

Every MPI_/MPIX_ function the real library exports (nm -D) is looked up in the installed
mpi.h (parsed as tools/gen_wrappers.py does). If it takes or returns a communicator, request,
message or status, librangecomm.so must export both MPI_X and PMPI_X. An exported function
that mpi.h does not declare fails too, unless tools/mpi_api.py lists it as safe to leave.
librangecomm.so must import no MPI function at all: every call it makes to MPI goes through
the table filled at start-up, so nothing inside it can re-enter its own wrappers. And every
rc_fake_/rc_hand_/rc_blocking_ hook it defines must be one that a wrapper calls.

With --mpi FAMILY, the MPI's Fortran library (tools/gen_fortran.py finds it) is checked too: for
every function that reads a communicator, request or message, librangecomm.so must define every
name under which the Fortran library exports that function, so that no Fortran call reaches
MPI's Fortran layer with one of the library's handles.

Usage: check_coverage.py --cc CC --cflags MPI_CFLAGS --shim path/to/librangecomm.so [--mpi F]
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools')
sys.path.insert(0, TOOLS)
import gen_fortran  # noqa: E402
import gen_wrappers  # noqa: E402
import mpi_api  # noqa: E402

FUNCTION_TYPES = {'T', 'W', 'i'}  # code, weak code, indirect function


def dynamic_symbols(path, undefined=False):
    flags = ['--undefined-only'] if undefined else ['--defined-only']
    out = subprocess.run(['nm', '-D'] + flags + [path], check=True, capture_output=True,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            symbols[parts[-1].split('@')[0]] = parts[-2]
    return symbols


def real_library(shim):
    """The MPI library the shim was linked against: the dependency that defines PMPI_Init."""
    out = subprocess.run(['ldd', shim], check=True, capture_output=True, text=True).stdout
    for path in re.findall(r'=>\s*(/\S+)', out):
        if dynamic_symbols(path).get('PMPI_Init') in FUNCTION_TYPES:
            return path
    raise SystemExit('check_coverage: no dependency of {} defines PMPI_Init'.format(shim))


def orphan_hooks(shim, funcs):
    """Hook definitions no wrapper calls (a misspelt rc_fake_MPI_X compiles but never runs)."""
    out = subprocess.run(['nm', '--defined-only', shim], capture_output=True, text=True).stdout
    defined = set(re.findall(r'\b(rc_(?:fake|hand|blocking)_P?MPIX?_\w+)$', out, re.M))
    if not defined:
        return []  # a stripped library: nothing to check
    called = set()
    for f in funcs.values():
        if not f.wrapped:
            continue
        if f.handwritten:
            called.add('rc_hand_' + f.name)
        if f.checked():
            called.add('rc_fake_' + f.name)
        if f.blocking:
            called.add('rc_blocking_' + f.name)
    lower = {name.lower() for name in funcs}
    problems = []
    for name in sorted(defined - called):
        function = re.sub(r'^rc_(fake|hand|blocking)_', '', name)
        # a function this MPI does not have is another MPI's (MPICH's c2f are macros, Open MPI
        # 4.1 has no MPI_Isendrecv): only a wrong kind of hook or a misspelling is an error
        if function in funcs or function.lower() in lower:
            problems.append('librangecomm.so defines {}, which no wrapper calls (see '
                            'tools/mpi_api.py for which hooks a function has)'.format(name))
    return problems


def fortran_problems(funcs, ours, mpi):
    """Names of the Fortran library's handle-reading functions that librangecomm.so lacks."""
    lib = gen_fortran.find_fortran_lib(mpi)
    if not lib:
        return [], 0
    groups = gen_fortran.exported_names(lib)
    by_name = {n: a for a, names in groups.items() for n in names}
    problems, covered = [], 0
    for f in funcs.values():
        if not gen_fortran.reads_fake(f):
            continue
        names = gen_fortran.fortran_names(f.name, groups, by_name)
        if not names:
            continue
        covered += 1
        for name in names:
            if ours.get(name) not in FUNCTION_TYPES:
                problems.append('{} reads a communicator, request or message, and '
                                'librangecomm.so does not define {} of {}'.format(
                                    f.name, name, os.path.basename(lib)))
    return problems, covered


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cc', required=True)
    ap.add_argument('--cflags', required=True)
    ap.add_argument('--shim', required=True)
    ap.add_argument('--mpi', default='', help='mpich or openmpi: check its Fortran library too')
    opts = ap.parse_args()

    funcs = gen_wrappers.load_api(opts.cc, shlex.split(opts.cflags))
    real = real_library(opts.shim)
    exported = {name for name, kind in dynamic_symbols(real).items()
                if kind in FUNCTION_TYPES and re.match(r'MPIX?_', name)}
    ours = {name for name, kind in dynamic_symbols(opts.shim).items() if kind in FUNCTION_TYPES}

    problems = []
    handle_taking = 0
    for name in sorted(exported):
        f = funcs.get(name)
        if f is None:
            if name not in mpi_api.NOT_WRAPPED_EXPORTS:
                problems.append('{} is exported by {} but declared in no mpi.h we parse: '
                                'classify it in tools/mpi_api.py'.format(name, real))
            continue
        if not f.takes_handles():
            continue
        handle_taking += 1
        for symbol in (name, f.pmpi):
            if symbol not in ours:
                problems.append('{} takes or returns a communicator, request, message or '
                                'status, and librangecomm.so does not export {}'.format(
                                    name, symbol))
    imported = sorted(name for name in dynamic_symbols(opts.shim, undefined=True)
                      if re.match(r'P?MPIX?_[A-Z][a-z]', name))
    for name in imported:
        problems.append('librangecomm.so imports {} directly instead of through its table of '
                        'real functions'.format(name))

    problems += orphan_hooks(opts.shim, funcs)
    fortran, covered = fortran_problems(funcs, dynamic_symbols(opts.shim), opts.mpi)
    problems += fortran

    for problem in problems:
        print('FAIL:', problem)
    print('{}: {} exported MPI functions, {} take handles; librangecomm.so exports {} '
          'MPI symbols; {} Fortran functions that read handles, each under all its names; '
          '{} problems'.format(real, len(exported), handle_taking, len(ours), covered,
                               len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
