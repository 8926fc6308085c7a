#!/usr/bin/env python3
"""The wrapper generator meets functions it has never seen, as a newer MPI would add them.

A header declares, after the installed mpi.h, MPI functions that tools/mpi_api.py does not
describe and tools/mpi_reviewed.txt does not list: an array of requests with its count, a
communicator by value, a handle return, a non-int return with a communicator, an array of
communicators, and a pointer to an array (length unknown). The generator must wrap every one
(exit 0), list each for review with what its wrapper does, and write wrappers that test every
fake handle it can see (array elements up to the count) and that compile with the shim's
headers.

Usage: check_generator.py --cc CC --cxx CXX --cflags MPI_CFLAGS --include-dir DIR ...
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools')

NOVEL_H = '''/* Functions no MPI has: the generator must wrap them from their C types. */
#pragma once
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif
int MPIX_Novel_request_all(int count, MPI_Request array_of_requests[], int *flag);
int MPIX_Novel_comm_touch(MPI_Comm comm, int value);
int MPIX_Novel_comms(int n, MPI_Comm comms[], int *result);
MPI_Comm MPIX_Novel_comm_from_int(int value);
double MPIX_Novel_comm_weight(MPI_Comm comm);
int MPIX_Novel_opaque(MPI_Request *requests[]);
#ifdef __cplusplus
}
#endif
'''

# name -> patterns its wrapper must contain
EXPECTED = {
    'MPIX_Novel_request_all': [
        r'rc_any_fake_request\(count, array_of_requests\)',
        r'MPI_ERR_REQUEST, "MPIX_Novel_request_all: argument \'array_of_requests\' holds a '
        r'rangecomm request'],
    'MPIX_Novel_comm_touch': [r'rc_is_fake_comm\(comm\)', r'MPI_ERR_COMM'],
    'MPIX_Novel_comms': [r'rc_any_fake_comm\(n, comms\)'],
    'MPIX_Novel_comm_from_int': [r'return rc_real\.MPIX_Novel_comm_from_int\(value\);'],
    'MPIX_Novel_comm_weight': [r'rc_is_fake_comm\(comm\)', r'return \{\}; \}'],
    'MPIX_Novel_opaque': [r'return rc_real\.MPIX_Novel_opaque\(requests\);'],
}

# name -> what the review list must say of it
REVIEW = {
    'MPIX_Novel_request_all': 'fake handles checked: MPI_Request array_of_requests[count]',
    'MPIX_Novel_comm_touch': 'fake handles checked: MPI_Comm comm',
    'MPIX_Novel_comms': 'fake handles checked: MPI_Comm comms[n]',
    'MPIX_Novel_comm_from_int': 'returns MPI_Comm',
    'MPIX_Novel_comm_weight': 'returns double',
    'MPIX_Novel_opaque': 'NOT checked (length unknown)',
}


def wrapper_text(outdir, name):
    """The generated definitions that belong to `name` (its hooks and the exported function)."""
    text = ''
    for i in range(4):
        with open(os.path.join(outdir, 'wrappers_{}.cpp'.format(i))) as f:
            text += f.read()
    blocks = re.split(r'\n(?=extern "C")', text)
    return '\n'.join(b for b in blocks if re.search(r'\b(rc_fake_)?{}\('.format(name), b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cc', required=True)
    ap.add_argument('--cxx', required=True)
    ap.add_argument('--cflags', required=True)
    ap.add_argument('--include-dir', action='append', default=[])
    opts = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, 'novel.h'), 'w') as f:
            f.write(NOVEL_H)
        outdir = os.path.join(tmp, 'out')
        os.mkdir(outdir)
        run = subprocess.run(
            [sys.executable, os.path.join(TOOLS, 'gen_wrappers.py'), '--cc', opts.cc,
             '--cflags=' + opts.cflags + ' -I' + tmp, '--include', 'novel.h',
             '--outdir', outdir], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr)
            print('FAIL: the generator refused an mpi.h with functions it does not know')
            return 1
        with open(os.path.join(outdir, 'wrapped-by-default.txt')) as f:
            review = f.read()
        for name, note in REVIEW.items():
            line = next((l for l in review.splitlines() if l.startswith(name + ':')), None)
            if line is None:
                problems.append('{} is not in wrapped-by-default.txt'.format(name))
            elif note not in line:
                problems.append('review line of {} lacks "{}": {}'.format(name, note, line))
            if name not in run.stdout:
                problems.append('the build output does not name {}'.format(name))
        for name, patterns in EXPECTED.items():
            text = wrapper_text(outdir, name)
            for pattern in patterns:
                if not re.search(pattern, text):
                    problems.append('the wrapper of {} lacks /{}/:\n{}'.format(
                        name, pattern, text))
        includes = ['-I' + tmp, '-I' + outdir] + ['-I' + d for d in opts.include_dir]
        for i in range(4):
            source = os.path.join(outdir, 'wrappers_{}.cpp'.format(i))
            cmd = (shlex.split(opts.cxx) + ['-std=c++17', '-fsyntax-only', '-DOMPI_SKIP_MPICXX=1',
                                             '-DMPICH_SKIP_MPICXX=1',
                                             '-DOMPI_OMIT_MPI1_COMPAT_DECLS=0']
                   + shlex.split(opts.cflags) + includes + [source])
            built = subprocess.run(cmd, capture_output=True, text=True)
            if built.returncode != 0:
                problems.append('wrappers_{}.cpp does not compile:\n{}'.format(
                    i, built.stderr[-3000:]))
    for p in problems:
        print('FAIL: ' + p)
    if not problems:
        print('ok: {} functions the generator had never seen, wrapped and listed for review'
              .format(len(EXPECTED)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
