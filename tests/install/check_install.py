#!/usr/bin/env python3
"""The installation, as a user outside the tree sees it (docs/getting-started.md).

Installs the build into a temporary DESTDIR, copies docs/examples/ out of the tree, builds them
with the MPI's mpicc/mpicxx (and mpif90, when given) and `pkg-config rangecomm` /
`rangecomm-cxx` (PKG_CONFIG_PATH and prefix pointed at the temporary install), runs them under
mpiexec at 2 and 3 ranks, and compares their output with values computed here (expected.py).
Then runs examples through the installed rangecomm-run launcher and checks that the library and
RANGECOMM_MODE reach every rank. With --cmake, builds the examples again through their
CMakeLists.txt (find_package(rangecomm): the C API and C++ core targets, and with --mpif90 the
Fortran example on the C API's target) and runs them the same way, and checks that the package refuses an MPI of the other family and a newer version.

Usage: check_install.py --meson MESON --builddir DIR --mpi openmpi|mpich --mpicc CC
                        --mpicxx CXX --examples DIR [--mpif90 FC] [--other-mpiexec EXE]
                        [--cmake CMAKE [--other-mpicc CC]]
                        -- MPIEXEC [ARGS...]
"""

import argparse
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

import expected

RANKS = [2, 3]
failures = []


def fail(what, detail=''):
    failures.append(what)
    print('FAILED:', what, flush=True)
    if detail:
        print(detail.rstrip('\n'), flush=True)


def run(cmd, env=None, timeout=60):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def install(args, destdir):
    """meson install into destdir; returns (prefix inside destdir, env with PKG_CONFIG_PATH)."""
    r = run([args.meson, 'install', '-C', args.builddir, '--no-rebuild', '--quiet',
             '--destdir', destdir], timeout=120)
    if r.returncode != 0:
        fail('meson install --destdir', r.stdout + r.stderr)
        return None, None
    pcs = glob.glob(os.path.join(destdir, '**', 'pkgconfig', 'rangecomm.pc'), recursive=True)
    if len(pcs) != 1:
        fail('exactly one rangecomm.pc installed', 'found: %s' % pcs)
        return None, None
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
    prefix = pkg_config(env, '', ['--variable=prefix', 'rangecomm'])
    return destdir + prefix, env


def pkg_config(env, prefix, words):
    define = ['--define-variable=prefix=' + prefix] if prefix else []
    r = run(['pkg-config'] + define + words, env=env)
    if r.returncode != 0:
        fail('pkg-config ' + ' '.join(words), r.stderr)
        return ''
    return r.stdout.strip()


def check_headers(source_root, prefix):
    """Every public header of the tree is installed (a header added later is not forgotten)."""
    for part in ['core', 'sort', 'shim']:
        include = os.path.join(source_root, part, 'include')
        for path in glob.glob(os.path.join(include, '**', '*.h*'), recursive=True):
            installed = os.path.join(prefix, 'include', os.path.relpath(path, include))
            if not os.path.isfile(installed):
                fail('header not installed: ' + os.path.relpath(path, source_root))


def check_files(prefix, libdir):
    for path in [os.path.join(libdir, 'librangecomm.so'),
                 os.path.join(libdir, 'librangecomm_core.a'),
                 os.path.join(libdir, 'pkgconfig', 'rangecomm-cxx.pc'),
                 os.path.join(prefix, 'include', 'rangecomm.h'),
                 os.path.join(prefix, 'include', 'rangecomm', 'rangecomm.hpp'),
                 os.path.join(prefix, 'include', 'rangecomm', 'jquick.hpp')]:
        if not os.path.isfile(path):
            fail('installed: ' + path)
    launcher = os.path.join(prefix, 'bin', 'rangecomm-run')
    if not os.access(launcher, os.X_OK):
        fail('installed and executable: ' + launcher)


def build_examples(args, env, prefix, libdir, src, out):
    """Compiles the examples (two at a time); returns {name: executable}."""
    c_flags = pkg_config(env, prefix, ['--cflags', '--libs', 'rangecomm']).split()
    c_cflags = pkg_config(env, prefix, ['--cflags', 'rangecomm']).split()
    cxx_flags = pkg_config(env, prefix, ['--cflags', '--libs', 'rangecomm-cxx']).split()
    rpath = ['-Wl,-rpath,' + libdir]  # a prefix outside the loader's path
    # name: commands; the last one links, with "-o name" added.
    jobs = {
        'hello_c': [[args.mpicc, '-Wall', 'hello_ranges.c'] + c_flags + rpath],
        'preload_c': [[args.mpicc, '-Wall', 'preload.c'] + c_cflags],  # no -lrangecomm
        'hello_cxx': [[args.mpicxx, '-std=c++17', '-Wall', 'hello_ranges.cpp'] + cxx_flags],
        'sort_cxx': [[args.mpicxx, '-std=c++17', '-Wall', 'sort.cpp'] + cxx_flags],
        'many_dups': [[args.mpicc, '-Wall', 'many_dups.c']],  # plain MPI: nothing of rangecomm
    }
    if args.mpif90:  # use mpi_f08 and the installed rangecomm module
        jobs['hello_f'] = [[args.mpif90, 'hello_ranges.f90'] + c_flags + rpath]
    built = {}

    def compile_one(name):
        exe = os.path.join(out, name)
        for i, cmd in enumerate(jobs[name]):
            cmd = cmd + (['-o', exe] if i == len(jobs[name]) - 1 else [])
            r = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                break
        return name, exe, r

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, exe, r in pool.map(compile_one, jobs):
            print('== compile %s: %s' % (name, ' && '.join(' '.join(c) for c in jobs[name])),
                  flush=True)
            if r.returncode != 0:
                fail('compile ' + name, r.stdout + r.stderr)
            else:
                built[name] = exe
    return built


def compare(label, want, result):
    if result.returncode != 0:
        fail('%s exited with %d' % (label, result.returncode), result.stdout + result.stderr)
    elif result.stdout != want:
        fail(label + ': output differs', 'expected:\n%sgot:\n%s%s' %
             (want, result.stdout, result.stderr))
    else:
        print('ok:', label, flush=True)


def run_examples(mpiexec, built):
    programs = {'hello_c': expected.hello_c, 'hello_cxx': expected.hello_cxx,
                'sort_cxx': expected.sort_cxx, 'hello_f': expected.hello_f,
                'preload_c': lambda np: expected.preload_c(np, ranges=False)}
    for name, want in programs.items():
        if name not in built:
            continue
        for np in RANKS:
            compare('%s at %d ranks' % (name, np), want(np),
                    run(mpiexec + ['-n', str(np), built[name]]))


def run_many_dups(args, mpiexec, launcher, exe):
    """An unmodified program keeping 5000 MPI_COMM_SELF dups alive: all of them under
    --mode accelerate; natively MPICH stops near 2046 (Open MPI's limit is higher)."""
    native = run(mpiexec + ['-n', '2', exe, '5000'])
    alive = expected.many_dups_alive(native.stdout)
    if native.returncode != 0 or alive is None or (args.mpi == 'mpich') != (alive < 5000):
        fail('many_dups natively: %s' % alive, native.stdout + native.stderr)
    else:
        print('ok: many_dups natively:', native.stdout.strip(), flush=True)
    compare('many_dups through rangecomm-run --mode accelerate', expected.many_dups(5000, 5000),
            run([launcher, '--mode', 'accelerate'] + mpiexec + ['-n', '2', exe, '5000']))


def run_launcher(args, mpiexec, prefix, libdir, built):
    launcher = os.path.join(prefix, 'bin', 'rangecomm-run')
    library = os.path.realpath(os.path.join(libdir, 'librangecomm.so'))
    if 'preload_c' in built:
        for np in RANKS:
            compare('preload_c through rangecomm-run at %d ranks' % np,
                    expected.preload_c(np, ranges=True),
                    run([launcher] + mpiexec + ['-n', str(np), built['preload_c']]))
    if 'hello_c' in built:  # a linked program under the launcher: library loaded once
        compare('hello_c through rangecomm-run --mode off', expected.hello_c(3),
                run([launcher, '--mode', 'off'] + mpiexec + ['-n', '3', built['hello_c']]))
    if 'hello_f' in built:  # a Fortran program under the launcher, in its default mode
        compare('hello_f through rangecomm-run', expected.hello_f(3),
                run([launcher] + mpiexec + ['-n', '3', built['hello_f']]))
    if 'hello_cxx' in built:  # the C++ API's own core next to the library's hidden one
        compare('hello_cxx through rangecomm-run', expected.hello_cxx(3),
                run([launcher] + mpiexec + ['-n', '3', built['hello_cxx']]))
    if 'many_dups' in built:
        run_many_dups(args, mpiexec, launcher, built['many_dups'])
    # What each rank's environment holds (a shell as the program: no MPI needed).
    show = ['sh', '-c', 'echo "$RANGECOMM_MODE|$RANGECOMM_LANES|$LD_PRELOAD"']
    env = dict(os.environ, RANGECOMM_LANES='2')
    env.pop('RANGECOMM_MODE', None)
    r = run([launcher, '--mode', 'shadow'] + mpiexec + ['-n', '2'] + show, env=env)
    lines = [line for line in r.stdout.splitlines() if '|' in line]
    ok = r.returncode == 0 and len(lines) == 2 and all(
        line.split('|')[0] == 'shadow' and line.split('|')[1] == '2' and
        os.path.realpath(line.split('|')[2].split(':')[0]) == library for line in lines)
    if not ok:
        fail('rangecomm-run passes LD_PRELOAD, RANGECOMM_MODE and RANGECOMM_* to every rank',
             r.stdout + r.stderr)
    else:
        print('ok: rangecomm-run environment of the ranks:', lines[0], flush=True)
    r = run([launcher, '--mode', 'fast'] + mpiexec + ['-n', '1', 'true'])
    if r.returncode != 2 or 'off, accelerate or shadow' not in r.stderr:
        fail('rangecomm-run rejects --mode fast', r.stdout + r.stderr)
    if args.other_mpiexec:  # the other MPI's launcher is refused, not run with a wrong library
        r = run([launcher, args.other_mpiexec, '-n', '1', 'true'])
        if r.returncode != 2 or 'built for' not in r.stderr:
            fail('rangecomm-run refuses ' + args.other_mpiexec, r.stdout + r.stderr)
        else:
            print('ok: rangecomm-run refuses', args.other_mpiexec, flush=True)


def cmake_configure(cmake, src, build, prefix, extra=()):
    return run([cmake, '-S', src, '-B', build, '-DCMAKE_PREFIX_PATH=' + prefix,
                '-DCMAKE_BUILD_TYPE=Release'] + list(extra), timeout=180)


def check_cmake(args, mpiexec, prefix, src, tmp):
    """docs/examples/CMakeLists.txt against the install: found, built, run; then the refusals."""
    build = os.path.join(tmp, 'cmake-build')
    r = cmake_configure(args.cmake, src, build, prefix)
    if r.returncode != 0:
        fail('cmake configures docs/examples (find_package(rangecomm))', r.stdout + r.stderr)
        return
    r = run([args.cmake, '--build', build, '--parallel', '2'], timeout=300)
    if r.returncode != 0:
        fail('cmake --build docs/examples', r.stdout + r.stderr)
        return
    programs = {'hello_ranges': expected.hello_c, 'hello_cxx': expected.hello_cxx,
                'sort': expected.sort_cxx}
    if args.mpif90:  # the Fortran example, where the build made the module (rangecomm.mod)
        programs['hello_f'] = expected.hello_f
    for name, want in programs.items():
        exe = os.path.join(build, name)
        if not os.path.exists(exe):
            fail('cmake --build docs/examples made %s' % name, '')
            continue
        for np in RANKS:
            compare('%s (CMake, rangecomm::%s) at %d ranks' % (
                        name, 'core' if name in ('hello_cxx', 'sort') else 'rangecomm', np),
                    want(np), run(mpiexec + ['-n', str(np), exe]))

    # A project asking for a version this install is not, or using the other family's MPI.
    probe = os.path.join(tmp, 'cmake-probe')
    os.mkdir(probe)
    cases = [('find_package(rangecomm 99.0) is refused', '99.0', [], 'version'),
             ('find_package(rangecomm 0.0) is refused', '0.0', [], 'version')]
    if args.other_mpicc:
        cases.append(('an MPI of the other family is refused', '', [
            '-DMPI_C_COMPILER=' + args.other_mpicc], 'built for ' + args.mpi))
    for what, version, extra, words in cases:
        with open(os.path.join(probe, 'CMakeLists.txt'), 'w') as out:
            out.write('cmake_minimum_required(VERSION 3.13)\nproject(probe C)\n'
                      'find_package(rangecomm %s REQUIRED)\n' % version)
        shutil.rmtree(os.path.join(probe, 'build'), ignore_errors=True)
        r = cmake_configure(args.cmake, probe, os.path.join(probe, 'build'), prefix, extra)
        text = ' '.join((r.stdout + r.stderr).split())
        if r.returncode == 0 or words not in text:
            fail(what + ' (with "%s")' % words, r.stdout + r.stderr)
        else:
            print('ok:', what, flush=True)


def main():
    sep = sys.argv.index('--')
    parser = argparse.ArgumentParser()
    for option in ['--meson', '--builddir', '--mpi', '--mpicc', '--mpicxx', '--examples']:
        parser.add_argument(option, required=True)
    parser.add_argument('--other-mpiexec')
    parser.add_argument('--mpif90')
    parser.add_argument('--cmake')
    parser.add_argument('--other-mpicc')
    args = parser.parse_args(sys.argv[1:sep])
    mpiexec = sys.argv[sep + 1:]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='rangecomm-install-') as tmp:
        prefix, env = install(args, os.path.join(tmp, 'destdir'))
        if prefix is None:
            return 1
        installed = time.monotonic()
        libdir = pkg_config(env, prefix, ['--variable=libdir', 'rangecomm'])
        mpi = pkg_config(env, prefix, ['--variable=mpi', 'rangecomm'])
        if mpi != args.mpi:
            fail('rangecomm.pc says mpi=%s, the build is for %s' % (mpi, args.mpi))
        check_files(prefix, libdir)
        check_headers(os.path.dirname(os.path.dirname(os.path.abspath(args.examples))), prefix)
        src = os.path.join(tmp, 'src')  # outside the tree: only the install provides headers
        shutil.copytree(args.examples, src)
        out = os.path.join(tmp, 'bin')
        os.mkdir(out)
        built = build_examples(args, env, prefix, libdir, src, out)
        compiled = time.monotonic()
        run_examples(mpiexec, built)
        run_launcher(args, mpiexec, prefix, libdir, built)
        ran = time.monotonic()
        if args.cmake:
            check_cmake(args, mpiexec, prefix, src, tmp)
    print('seconds: install %.1f, compile %.1f, runs %.1f, CMake %.1f' % (
        installed - started, compiled - installed, ran - compiled, time.monotonic() - ran))
    print('%d failure(s)' % len(failures), flush=True)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
