#!/usr/bin/env python3
"""Generates the PMPI wrappers of librangecomm.so from the installed mpi.h.

The C preprocessor expands mpi.h, pycparser parses the result, and every MPI_/MPIX_ function
gets its exact signature; each parameter is classified by its declared type (communicator,
request, message, status; by value, pointer or array). tools/mpi_api.py adds what types
cannot tell. See docs/shim-design.md for the contract the generated code implements.

A function that mpi_api.py does not describe is wrapped from its C types alone (fake handles by
value, in-out and in arrays of a given length are checked; on a fake one a collective gets the
range's real communicator and anything else MPI's error class for the handle); the build prints
those not listed in tools/mpi_reviewed.txt, and writes them to wrapped-by-default.txt.

Usage: gen_wrappers.py --cc "cc" --cflags "$(pkg-config --cflags mpich)" --outdir DIR
       gen_wrappers.py --cc "cc" --cflags "..." --list   (one wrapped function per line)
"""

import argparse
import copy
import os
import shlex
import subprocess
import sys

from pycparser import c_ast, c_generator, c_parser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_api  # noqa: E402
import gen_emit  # noqa: E402

HANDLE_TYPES = ('MPI_Comm', 'MPI_Request', 'MPI_Message', 'MPI_Status')

# GNU C that system headers may contain and pycparser does not know.
GNU_STUBS = [
    '__attribute__(x)=', '__extension__=', '__restrict=', '__restrict__=', '__inline=',
    '__inline__=', '__asm__(x)=', '__asm(x)=', '__volatile__=', '__const=const',
    '__signed__=signed', '__builtin_va_list=char*', '_Float128=double', '__float128=double',
    '_Float64x=double', '_Float32=float', '_Float64=double', '_Float32x=double',
    '_Noreturn=', '__thread=', '_Thread_local=', '__typeof__(x)=int', '__alignof__(x)=8',
]

# mpi.h, and the extensions header where the MPI library has one (Open MPI's declares MPIX_
# persistent collectives, which take communicators).
MPI_INCLUDES = '''#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
'''

CXX_KEYWORDS = {'new', 'delete', 'class', 'this', 'template', 'typename', 'operator',
                'private', 'public', 'protected', 'friend', 'virtual', 'namespace', 'using'}


CHECKED_TYPES = ('MPI_Comm', 'MPI_Request', 'MPI_Message')  # handles that can be fake


class Param:
    def __init__(self, name, text, ctype, htype, shape, const):
        self.name = name      # our name for it (the declared one, or aN)
        self.text = text      # its C declaration, e.g. 'const MPI_Status *status'
        self.ctype = ctype    # the type's name, e.g. 'int', 'MPI_Status'; None for others
        self.htype = htype    # one of HANDLE_TYPES, or None
        self.shape = shape    # 'value', 'pointer', 'array', 'pointer2'
        self.const = const
        self.inout = False    # a pointer whose current value is read
        self.count = None     # an array of handles: the parameter that gives its length


class Function:
    def __init__(self, name, ret, params, variadic):
        self.name = name
        self.ret = ret
        self.params = params
        self.variadic = variadic
        self.ret_htype = ret if ret in HANDLE_TYPES else None
        self.progress = None  # a blocking call's way under the progress rule (assign_progress)
        self.twin = None      # its nonblocking form, for progress 'twin'
        last_int = None
        for p in params:
            p.inout = p.shape == 'pointer' and p.htype in mpi_api.inout_types(name)
            if p.shape == 'array' and p.htype in CHECKED_TYPES:
                p.count = last_int  # MPI's convention: (int count, MPI_Request array[])
            if p.shape == 'value' and p.ctype == 'int':
                last_int = p.name

    @property
    def pmpi(self):
        return 'P' + self.name

    def takes_handles(self):
        return self.ret_htype is not None or any(p.htype for p in self.params)

    @property
    def wrapped(self):
        if self.variadic:
            return False
        return self.takes_handles() or mpi_api.wrapped_without_handles(self.name)

    @property
    def blocking(self):
        return mpi_api.is_blocking(self.name)

    @property
    def handwritten(self):
        return mpi_api.is_handwritten(self.name)

    @property
    def collective(self):
        return mpi_api.is_collective(self.name)

    @property
    def change_report(self):
        return mpi_api.change_report(self.name)

    def checked(self):
        """Parameters whose handle values are tested for fake: by value, in-out pointers, and
        arrays whose length is a parameter."""
        return [p for p in self.params
                if p.htype in CHECKED_TYPES
                and (p.shape == 'value' or p.inout or (p.shape == 'array' and p.count))]

    def unchecked(self):
        """Handle parameters whose values the generated code cannot test: arrays of unknown
        length and pointers to pointers (MPI has neither today)."""
        return [p for p in self.params
                if p.htype in CHECKED_TYPES
                and ((p.shape == 'array' and not p.count) or p.shape == 'pointer2')]

    def summary(self):
        """What the generated wrapper does, in words (the review list of the build)."""
        def handle(p):
            if p.shape == 'array':
                return '{} {}[{}]'.format(p.htype, p.name, p.count or '?')
            return '{} {}{}'.format(p.htype, '*' if p.inout else '', p.name)
        parts = ['returns ' + self.ret]
        checked = self.checked()
        if checked:
            parts.append('fake handles checked: ' + ', '.join(handle(p) for p in checked))
            parts.append('on a fake one: ' + ('a real communicator for the range'
                                              if self.collective else 'MPI error class'))
        unchecked = self.unchecked()
        if unchecked:
            parts.append('NOT checked (length unknown): ' +
                         ', '.join(handle(p) for p in unchecked))
        if self.blocking:
            parts.append('progress rule: ' + (self.progress or '?'))
        return '; '.join(parts)

    def args(self):
        return ', '.join(p.name for p in self.params)

    def decl(self, name):
        params = ', '.join(p.text for p in self.params) or 'void'
        return '{} {}({})'.format(self.ret, name, params)


def preprocess(cc, cflags, includes):
    defines = ['-D' + d for d in mpi_api.MPI_H_DEFINES + GNU_STUBS]
    cmd = shlex.split(cc) + ['-E', '-P', '-xc'] + defines + cflags + ['-']
    return subprocess.run(cmd, input=includes, check=True, capture_output=True,
                          text=True).stdout


def _shape(node):
    """(typedef name or None, 'value'/'pointer'/'array', const) of a parameter's type."""
    shape = 'value'
    while True:
        if isinstance(node, c_ast.PtrDecl):
            shape = 'pointer' if shape == 'value' else 'pointer2'
            node = node.type
        elif isinstance(node, c_ast.ArrayDecl):
            shape = 'array' if shape == 'value' else 'pointer2'
            node = node.type
        elif isinstance(node, c_ast.TypeDecl):
            if isinstance(node.type, c_ast.IdentifierType):
                return ' '.join(node.type.names), shape, 'const' in node.quals
            return None, shape, False
        else:  # a function type
            return None, shape, False


def _rename(param, name):
    """Text of the parameter's declaration under our name."""
    node = copy.deepcopy(param)
    if isinstance(node, c_ast.Decl):
        node.name = name
    inner = node.type
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    inner.declname = name
    return c_generator.CGenerator().visit(node)


def _param(index, node):
    name = getattr(node, 'name', None) or 'a{}'.format(index)
    if name in CXX_KEYWORDS:
        name += '_'
    tname, shape, const = _shape(node.type)
    htype = tname if tname in HANDLE_TYPES else None
    return Param(name, _rename(node, name), tname, htype, shape, const)


def load_api(cc, cflags, includes=MPI_INCLUDES):
    """Every MPI_/MPIX_ function mpi.h declares, by name."""
    ast = c_parser.CParser().parse(preprocess(cc, cflags, includes), 'mpi.h')
    funcs = {}
    for ext in ast.ext:
        if not (isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl)):
            continue
        if not (ext.name.startswith('MPI_') or ext.name.startswith('MPIX_')):
            continue
        nodes = ext.type.args.params if ext.type.args else []
        variadic = any(isinstance(n, c_ast.EllipsisParam) for n in nodes)
        nodes = [n for n in nodes if not isinstance(n, c_ast.EllipsisParam)]
        if len(nodes) == 1 and _shape(nodes[0].type) == ('void', 'value', False):
            nodes = []  # f(void)
        params = [_param(i, n) for i, n in enumerate(nodes)]
        ret = c_generator.CGenerator().visit(ext.type.type)
        funcs[ext.name] = Function(ext.name, ret, params, variadic)
    return funcs


def _is_twin(f, t):
    """Whether t takes f's parameters but a trailing status, then a request."""
    def sig(params):
        return [(p.ctype, p.shape) for p in params]
    mine = f.params[:-1] if f.params and f.params[-1].ctype == 'MPI_Status' else f.params
    return (t.ret == f.ret and len(t.params) == len(mine) + 1 and
            sig(t.params[:-1]) == sig(mine) and sig(t.params[-1:]) == [('MPI_Request', 'pointer')])


def assign_progress(funcs):
    """Each blocking call's way under the progress rule (mpi_api.progress_kind): a call whose
    nonblocking twin this mpi.h lacks, or declares differently, gets a helper thread."""
    for f in funcs.values():
        if not f.blocking:
            continue
        f.progress = mpi_api.progress_kind(f.name)
        if f.progress == 'twin':
            t = funcs.get(mpi_api.twin_name(f.name))
            if t is not None and _is_twin(f, t):
                f.twin = t
            else:
                f.progress = 'helper'


def reviewed_names(path):
    """The functions whose wrappers have been reviewed (one name per line, # comments)."""
    with open(path) as f:
        return {line.split('#')[0].strip() for line in f} - {''}


def by_default(funcs, reviewed):
    """Wrapped functions that mpi_api.py does not describe and no one has reviewed, or whose
    handles the generated code cannot all check: wrapped from their C types alone."""
    return [f for f in sorted(funcs.values(), key=lambda f: f.name)
            if f.wrapped and not f.handwritten and (f.name not in reviewed or f.unchecked())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--cc', required=True, help='C compiler command (for the preprocessor)')
    ap.add_argument('--cflags', default='', help="the MPI library's compile flags")
    ap.add_argument('--include', action='append', default=[],
                    help='a header to parse after mpi.h (repeatable)')
    ap.add_argument('--outdir', help='where to write the generated files')
    ap.add_argument('--list', action='store_true', help='print the wrapped functions')
    ap.add_argument('--reviewed', default=os.path.join(os.path.dirname(__file__),
                                                        'mpi_reviewed.txt'),
                    help='functions whose wrappers have been reviewed')
    opts = ap.parse_args()
    includes = MPI_INCLUDES + ''.join('#include "{}"\n'.format(h) for h in opts.include)
    funcs = load_api(opts.cc, shlex.split(opts.cflags), includes)
    assign_progress(funcs)
    if opts.list:
        for f in sorted(funcs.values(), key=lambda f: f.name):
            if f.wrapped:
                flags = [k for k in ('blocking', 'handwritten', 'collective') if getattr(f, k)]
                if f.progress:
                    flags.append('progress:' + f.progress)
                print(f.name, ' '.join(flags))
        return
    unreviewed = by_default(funcs, reviewed_names(opts.reviewed))
    gen_emit.write_all(funcs, opts.outdir, includes, unreviewed)
    if unreviewed:
        print('gen_wrappers: {} function(s) of this MPI wrapped from their C types alone; '
              'review them and add them to tools/mpi_reviewed.txt:'.format(len(unreviewed)))
        for f in unreviewed:
            print('  {}: {}'.format(f.name, f.summary()))


if __name__ == '__main__':
    main()
