#!/usr/bin/env python3
"""Runs the own tests of libraries that applications reach MPI through, natively and under
librangecomm.so (LD_PRELOAD) in the off, accelerate and shadow modes, on each MPI the library is
built for: PETSc's tutorials (tests/libraries/petsc.txt), parallel HDF5's testpar programs
(tests/libraries/hdf5.txt) and DOLFINx's Python demos (tests/libraries/dolfinx.txt, on the MPI
Debian builds DOLFINx on). A test passes in a mode when it ends as its native run did: the
same exit status and, where the output is deterministic, the same standard output byte for byte
(HDF5's ranks print interleaved lines: there the number of failure reports must match;
DOLFINx's demos print their results: there every number must match to a relative 1e-8, as two
native runs do, whose floating-point sums arrive in different orders).

The libraries come from Debian's packages (installed by tools/setup.sh when missing), their
tests from Debian's source packages (tools/apt-source.sh), built once into a cache and reused:
/var/cache/rangecomm/libraries where it can write, else .cache/libraries
(RANGECOMM_LIBRARY_CACHE overrides). The last line is "N passed, N failed" over every test and
mode (native runs included); the exit status is nonzero if anything failed. docs/libraries.md
has today's results.

  tools/library_tests.py [--full] [--libraries petsc,hdf5,dolfinx] [--mpis mpich,openmpi]
                         [--modes native,off,accelerate,shadow] [--tests REGEX]
                         [--build-mpich DIR] [--build-openmpi DIR] [--build-petsc]

Without --full only the tests marked `ci` (or `ci:<mpi>` for that MPI) run: the test command's
selection.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
MODES = ("native", "off", "accelerate", "shadow")
# Words with which the tests report a failure; counted where the ranks' lines interleave.
FAILURE_WORDS = re.compile(rb"FAILED|[Ff]ailed|ERROR|Error")


def say(text):
    print(text, flush=True)


def run_quiet(command, cwd=None, env=None, what=""):
    """Runs a build step; on failure prints its output's tail and raises."""
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = done.stdout.decode(errors="replace").splitlines()[-30:]
        say("\n".join("  | " + line for line in tail))
        raise RuntimeError(f"{what or command[0]} failed (exit status {done.returncode})")


def installed_version(package):
    done = subprocess.run(["dpkg-query", "-W", "-f=${source:Version}", package],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def fetch_source(package, version, dest):
    """The unpacked source package in dest, fetched once."""
    if (dest / ".complete").exists():
        return
    run_quiet([str(TOP / "tools/apt-source.sh"), f"{package}={version}", str(dest)],
              what=f"apt-get source {package}")
    (dest / ".complete").touch()


class NotBuilt(Exception):
    """A library this run cannot test on an MPI, and why."""


class Test:
    def __init__(self, line):
        fields = [field.strip() for field in line.split("|")]
        if len(fields) != 5:
            raise ValueError(f"not 'name | ranks | program | arguments | marks': {line}")
        self.name, ranks, self.program, arguments, marks = fields
        self.ranks = int(ranks)
        self.arguments = shlex.split(arguments)
        self.marks = set(marks.split())


def read_tests(path):
    with open(path) as listing:
        return [Test(line) for line in listing
                if line.strip() and not line.lstrip().startswith("#")]


class Petsc:
    """PETSc's tutorials, built with PETSc's own make variables: against Debian's petsc-dev on
    the MPI Debian builds it for (Open MPI), and on the other MPI against a PETSc built here
    from the same source package without external packages (--full or --build-petsc: about 12
    minutes on 2 cores, once per machine; the test command's budget has no room for it, so
    without it that MPI runs PETSc only when the cache has it, and says so otherwise)."""
    name = "petsc"
    packages = ["petsc-dev", "make"]
    listing = TOP / "tests/libraries/petsc.txt"
    debian = Path("/usr/lib/petsc")
    interleaved = False
    max_ranks = {"mpich": 4}  # MPICH's ranks busy-poll: more than the cores only crawl
    build_from_source = False

    def debian_mpi(self):
        # Debian builds PETSc on its default MPI only; its make variables name that MPI.
        variables = self.debian / "lib/petsc/conf/petscvariables"
        text = variables.read_text() if variables.exists() else ""
        return next((mpi for mpi in ("openmpi", "mpich") if f"/{mpi}/" in text), None)

    def petsc_dir(self, cache, mpi, source):
        """Debian's PETSc, or one built from its source package for this MPI."""
        if mpi == self.debian_mpi():
            return self.debian
        install = cache / f"{source.name}-install-{mpi}"
        if (install / ".complete").exists():
            return install
        if not self.build_from_source:
            raise NotBuilt(f"Debian's PETSc is built on {self.debian_mpi()}; one for {mpi} is "
                           "not in the cache (--build-petsc or --full builds it, ~12 min)")
        work = cache / f"{source.name}-build-{mpi}-src"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(source, work, symlinks=True)
        say(f"   building PETSc for {mpi} from its source package (~12 min)")
        run_quiet(["python3", "./configure", f"--prefix={install}", f"--with-cc=mpicc.{mpi}",
                   f"--with-cxx=mpicxx.{mpi}", f"--with-mpiexec=mpiexec.{mpi}", "--with-fc=0",
                   "--with-blaslapack-lib=-llapack -lblas", "--with-debugging=0",
                   "COPTFLAGS=-O1", "CXXOPTFLAGS=-O1", "--with-x=0", "--with-ssl=0",
                   "PETSC_ARCH=build"], cwd=work, what=f"configuring PETSc for {mpi}")
        make = ["make", f"PETSC_DIR={work}", "PETSC_ARCH=build"]
        run_quiet(make + ["MAKE_NP=2", "all"], cwd=work, what=f"building PETSc for {mpi}")
        run_quiet(make + ["install"], cwd=work, what=f"installing PETSc for {mpi}")
        shutil.rmtree(work, ignore_errors=True)
        (install / ".complete").touch()
        return install

    def packages_of(self, petsc_dir):
        """The external packages this PETSc has (PETSC_HAVE_<NAME> in petscconf.h)."""
        conf = petsc_dir / "include/petscconf.h"
        text = conf.read_text() if conf.exists() else ""
        return {name.lower() for name in re.findall(r"#define PETSC_HAVE_(\w+) 1", text)}

    def select(self, cache, mpi, tests):
        """The tests this MPI's PETSc can run: its packages, MPI's rank limit."""
        version = installed_version("petsc-dev")
        source = cache / f"petsc-{version}"
        fetch_source("petsc", version, source)
        self.dir = self.petsc_dir(cache, mpi, source)
        have = self.packages_of(self.dir)
        limit = self.max_ranks.get(mpi, 1 << 30)
        return [t for t in tests if t.ranks <= limit and
                all(mark[6:] in have for mark in t.marks if mark.startswith("needs:"))]

    def build(self, cache, mpi, tests):
        version = installed_version("petsc-dev")
        source = cache / f"petsc-{version}"
        build = cache / f"petsc-{version}-build-{mpi}"
        build.mkdir(exist_ok=True)
        programs = sorted({test.program for test in tests})
        for program in programs:
            folder = source / "src" / Path(program).parent
            for header in folder.glob("*.h"):
                shutil.copy(header, build / header.name)
            shutil.copy(source / "src" / (program + ".c"), build / (self.exe(program) + ".c"))
        exes = " ".join(self.exe(program) for program in programs)
        (build / "makefile").write_text(
            f"PETSC_DIR = {self.dir}\n"
            "include ${PETSC_DIR}/lib/petsc/conf/variables\n"
            "include ${PETSC_DIR}/lib/petsc/conf/rules\n"
            f"EXES = {exes}\n"
            "all: $(EXES)\n"
            # Debian's PETSc sources build without run paths: the one built here needs one.
            "$(EXES): %: %.o\n\t${CLINKER} -o $@ $< ${PETSC_LIB} -Wl,-rpath,${PETSC_DIR}/lib\n")
        run_quiet(["make", "-j2", "all"], cwd=build, what="building PETSc's tutorials")
        return build

    @staticmethod
    def exe(program):
        return program.replace("/", "-")

    def command(self, build, test):
        return [str(build / self.exe(test.program))] + test.arguments


class Hdf5:
    """Parallel HDF5's testpar programs, built from its source package against Debian's
    libhdf5-<mpi>-dev (only the test helper library and testpar are built)."""
    name = "hdf5"
    packages = ["libhdf5-mpich-dev", "libhdf5-openmpi-dev", "libaec-dev", "make"]
    listing = TOP / "tests/libraries/hdf5.txt"
    interleaved = True

    def select(self, cache, mpi, tests):
        return tests

    def build(self, cache, mpi, tests):
        version = installed_version(f"libhdf5-{mpi}-dev")
        source = cache / f"hdf5-{version}"
        fetch_source("hdf5", version, source)
        build = cache / f"hdf5-{version}-build-{mpi}"
        programs = sorted({test.program for test in tests})
        build.mkdir(exist_ok=True)
        env = dict(os.environ, CC=f"mpicc.{mpi}")
        if not (build / "Makefile").exists():
            run_quiet([str(source / "configure"), "--enable-parallel", "--disable-fortran",
                       "--disable-cxx", "--disable-hl", "--disable-tools",
                       "--enable-build-mode=production", "--with-zlib", "--with-szlib",
                       "--enable-shared", "--disable-static"],
                      cwd=build, env=env, what=f"configuring HDF5 for {mpi}")
        # HDF5's production flags strip (-s); the library is Debian's, linked as installed.
        flags = ["AM_CFLAGS=-std=c99 -w", "CFLAGS=-g -O1"]
        run_quiet(["make", "-C", "test", "-j2"] + flags + ["libh5test.la"], cwd=build, env=env,
                  what="building HDF5's test helper library")
        # Where Debian's hdf5-<mpi>.pc (which meson reads for the bench programs too) says.
        libdir = subprocess.run(["pkg-config", "--libs-only-L", f"hdf5-{mpi}"],
                                stdout=subprocess.PIPE, text=True).stdout.split()
        library = f"{libdir[0][2:] if libdir else '/usr/lib'}/libhdf5.so"
        run_quiet(["make", "-C", "testpar", "-j2"] + flags + [f"LIBHDF5={library}"] + programs,
                  cwd=build, env=env, what="building HDF5's testpar programs")
        return build / "testpar"

    def command(self, build, test):
        return ["./" + test.program] + test.arguments


class Dolfinx:
    """DOLFINx's Python demos as Debian's dolfinx-doc ships them, run by
    tests/libraries/dolfinx_demo.py (which prints what each computed) with the system's Python,
    on the MPI Debian builds DOLFINx and mpi4py on. Nothing to build: the demos' forms are
    compiled on first use into DOLFINx's own cache (~/.cache/fenics), during the native run."""
    name = "dolfinx"
    packages = ["python3-dolfinx", "dolfinx-doc"]
    listing = TOP / "tests/libraries/dolfinx.txt"
    demos = Path("/usr/share/dolfinx/demo-python")
    mpi4py = Path("/usr/lib/python3/dist-packages/mpi4py")
    interleaved = False
    tolerance = 1e-8

    def debian_mpi(self):
        libraries = subprocess.run(["ldd"] + [str(p) for p in self.mpi4py.glob("MPI.*.so")],
                                   stdout=subprocess.PIPE, text=True).stdout
        return "mpich" if "libmpich" in libraries else "openmpi"

    def select(self, cache, mpi, tests):
        if mpi != self.debian_mpi():
            raise NotBuilt(f"Debian builds DOLFINx on {self.debian_mpi()} only")
        return tests

    def build(self, cache, mpi, tests):
        return self.demos

    def command(self, build, test):
        return ["/usr/bin/python3", str(TOP / "tests/libraries/dolfinx_demo.py"),
                str(build / test.program)] + test.arguments


LIBRARIES = {"petsc": Petsc(), "hdf5": Hdf5(), "dolfinx": Dolfinx()}


def mpiexec(mpi, ranks):
    if mpi == "openmpi":
        launcher = ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
    else:
        launcher = ["mpiexec.mpich", "-launcher", "fork"]
    return launcher + ["-n", str(ranks)]


def run_once(command, cwd, timeout):
    """(exit status or 'timeout', stdout bytes, seconds). HDF5's programs put their files in
    HDF5_PARAPREFIX."""
    start = time.monotonic()
    env = dict(os.environ, HDF5_PARAPREFIX=str(cwd))
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
        status = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        status = "timeout"
    return status, out, time.monotonic() - start


def fails_natively(test, mpi):
    return "native-fails" in test.marks or f"native-fails:{mpi}" in test.marks


NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def same_within(ours, theirs, tolerance):
    """Whether two outputs are the same text with every number equal to a relative tolerance."""
    if NUMBER.split(ours) != NUMBER.split(theirs):
        return False
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs)):
        if a == b:
            continue
        x, y = float(a), float(b)
        if not abs(x - y) <= tolerance * max(abs(x), abs(y)):
            return False
    return True


def verdict(library, test, mpi, native, result):
    """None when result ends as the native run did, else why not."""
    status, out = result
    if "nondeterministic" in test.marks:
        same = (status == 0) == (native[0] == 0)
        return None if same else f"exit status {status}, natively {native[0]}"
    if status != native[0]:
        return f"exit status {status}, natively {native[0]}"
    if fails_natively(test, mpi):
        return None
    if library.interleaved:
        ours, theirs = len(FAILURE_WORDS.findall(out)), len(FAILURE_WORDS.findall(native[1]))
        return None if ours == theirs else f"{ours} failure reports, natively {theirs}"
    tolerance = getattr(library, "tolerance", 0.0)
    if tolerance:
        return None if same_within(out, native[1], tolerance) else \
            f"standard output differs from the native run's by more than a relative {tolerance}"
    return None if out == native[1] else "standard output differs from the native run's"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--libraries", default="petsc,hdf5,dolfinx")
    parser.add_argument("--mpis", default="mpich,openmpi")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--tests", default=".", help="regular expression on test names")
    parser.add_argument("--build-mpich", default="build-mpich")
    parser.add_argument("--build-openmpi", default="build-openmpi")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per run")
    parser.add_argument("--build-petsc", action="store_true",
                        help="build PETSc for the MPI Debian's is not built on (--full does)")
    args = parser.parse_args()
    LIBRARIES["petsc"].build_from_source = args.full or args.build_petsc
    libraries = [LIBRARIES[name] for name in args.libraries.split(",")]
    modes = ["native"] + [mode for mode in args.modes.split(",") if mode != "native"]
    wanted_mpis = args.mpis.split(",")

    packages = [package for library in libraries for package in library.packages]
    if subprocess.run([str(TOP / "tools/setup.sh")] + packages).returncode != 0:
        say("library-tests: installing the libraries failed\n0 passed, 1 failed")
        return 1
    cache = Path(os.environ.get("RANGECOMM_LIBRARY_CACHE", "/var/cache/rangecomm/libraries"))
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        cache = TOP / ".cache/libraries"
        cache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    passed = failed = 0
    table = []
    for library in libraries:
        listed = [test for test in read_tests(library.listing) if re.search(args.tests, test.name)]
        for mpi in wanted_mpis:
            tests = [test for test in listed if f"skip:{mpi}" not in test.marks and
                     (args.full or "ci" in test.marks or f"ci:{mpi}" in test.marks)]
            shim = (TOP / getattr(args, "build_" + mpi) / "shim/librangecomm.so").resolve()
            if not shim.exists():
                say(f"library-tests: no {shim}: build it first")
                failed += 1
                continue
            start = time.monotonic()
            try:
                tests = library.select(cache, mpi, tests)
                say(f"== {library.name} on {mpi}: build ({len(tests)} tests)")
                build = library.build(cache, mpi, tests)
            except NotBuilt as why:
                say(f"== {library.name} on {mpi}: NOT RUN: {why}")
                continue
            except RuntimeError as error:
                say(f"library-tests: {error}")
                failed += 1
                continue
            say(f"== {library.name} on {mpi}: built in {time.monotonic() - start:.0f} s")
            counts = {mode: [0, 0, 0.0] for mode in modes}
            for test in tests:
                native = None
                line = [f"{test.name:<34} np={test.ranks:<2}"]
                for mode in modes:
                    work = cache / "work" / f"{library.name}-{mpi}" / mode
                    work.mkdir(parents=True, exist_ok=True)
                    if library.interleaved:  # programs run as ./name (t_cache_image execs itself)
                        link = work / test.program
                        if os.path.lexists(link):
                            link.unlink()
                        link.symlink_to(build / test.program)
                    command = mpiexec(mpi, test.ranks)
                    if mode != "native":
                        command += ["env", f"LD_PRELOAD={shim}", f"RANGECOMM_MODE={mode}"]
                    command += library.command(build, test)
                    status, out, seconds = run_once(command, work, args.timeout)
                    counts[mode][2] += seconds
                    if mode == "native":
                        native = (status, out)
                        bad = None
                        if not fails_natively(test, mpi) and status != 0:
                            bad = f"fails natively (exit status {status})"
                        elif fails_natively(test, mpi) and status == 0:
                            bad = "passes natively: its native-fails mark is out of date"
                    else:
                        bad = verdict(library, test, mpi, native, (status, out))
                    if bad is None:
                        counts[mode][0] += 1
                        line.append(f"{mode} {seconds:.1f}s")
                    else:
                        counts[mode][1] += 1
                        line.append(f"{mode} FAILED ({bad})")
                        say(f"---- {library.name}/{test.name} {mode}: {bad}; command:\n  "
                            + " ".join(shlex.quote(part) for part in command))
                        tail = out.decode(errors="replace").splitlines()[-15:]
                        say("\n".join("  | " + text for text in tail))
                        if mode == "native":
                            break
                say("  ".join(line))
            for mode in modes:
                ok, bad, seconds = counts[mode]
                passed += ok
                failed += bad
                table.append(f"{library.name:<6} {mpi:<8} {mode:<10} {ok:>4} passed "
                             f"{bad:>3} failed  {seconds:7.0f} s")
            say(f"== {library.name} on {mpi}: tested in {time.monotonic() - start:.0f} s")
    say("\n".join(["== library tests: library, MPI, mode, results, time"] + table))
    say(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
