#!/usr/bin/env python3
"""Runs the own tests of libraries that applications reach MPI through, natively and under
librangecomm.so (LD_PRELOAD) in the off, accelerate and shadow modes, on each MPI the library is
built for: PETSc's tutorials (tests/libraries/petsc.txt) and parallel HDF5's testpar programs
(tests/libraries/hdf5.txt). A test passes in a mode when it ends as its native run did: the
same exit status and, where the output is deterministic, the same standard output byte for byte
(HDF5's ranks print interleaved lines: there the number of failure reports must match).

The libraries come from Debian's packages (installed by tools/setup.sh when missing), their
tests from Debian's source packages (tools/apt-source.sh), built once into a cache and reused:
/var/cache/rangecomm/libraries where it can write, else .cache/libraries
(RANGECOMM_LIBRARY_CACHE overrides). The last line is "N passed, N failed" over every test and
mode (native runs included); the exit status is nonzero if anything failed. docs/libraries.md
has today's results.

  tools/library_tests.py [--full] [--libraries petsc,hdf5] [--mpis mpich,openmpi]
                         [--modes native,off,accelerate,shadow] [--tests REGEX]
                         [--build-mpich DIR] [--build-openmpi DIR]

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
    """PETSc's tutorials, built with PETSc's own make variables against Debian's petsc-dev."""
    name = "petsc"
    packages = ["petsc-dev"]
    listing = TOP / "tests/libraries/petsc.txt"
    petsc_dir = Path("/usr/lib/petsc")
    interleaved = False

    def mpis(self):
        # Debian builds PETSc on its default MPI only; its make variables name that MPI.
        variables = self.petsc_dir / "lib/petsc/conf/petscvariables"
        text = variables.read_text() if variables.exists() else ""
        return [mpi for mpi in ("openmpi", "mpich") if f"/{mpi}/" in text][:1]

    def build(self, cache, mpi, tests):
        version = installed_version("petsc-dev")
        source = cache / f"petsc-{version}"
        fetch_source("petsc", version, source)
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
            f"PETSC_DIR = {self.petsc_dir}\n"
            "include ${PETSC_DIR}/lib/petsc/conf/variables\n"
            "include ${PETSC_DIR}/lib/petsc/conf/rules\n"
            f"EXES = {exes}\n"
            "all: $(EXES)\n"
            "$(EXES): %: %.o\n\t${CLINKER} -o $@ $< ${PETSC_LIB}\n")
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
    packages = ["libhdf5-mpich-dev", "libhdf5-openmpi-dev", "libaec-dev"]
    listing = TOP / "tests/libraries/hdf5.txt"
    interleaved = True

    def mpis(self):
        return ["mpich", "openmpi"]

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
        library = f"/usr/lib/x86_64-linux-gnu/hdf5/{mpi}/libhdf5.so"
        multiarch = subprocess.run(["gcc", "-print-multiarch"], stdout=subprocess.PIPE,
                                   text=True).stdout.strip()
        if multiarch:
            library = f"/usr/lib/{multiarch}/hdf5/{mpi}/libhdf5.so"
        run_quiet(["make", "-C", "testpar", "-j2"] + flags + [f"LIBHDF5={library}"] + programs,
                  cwd=build, env=env, what="building HDF5's testpar programs")
        return build / "testpar"

    def command(self, build, test):
        return ["./" + test.program] + test.arguments


LIBRARIES = {"petsc": Petsc(), "hdf5": Hdf5()}


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


def verdict(library, test, native, result):
    """None when result ends as the native run did, else why not."""
    status, out = result
    if "native-fails" in test.marks:
        return None if status != 0 else "passes where the native run fails"
    if status != native[0]:
        return f"exit status {status}, natively {native[0]}"
    if "nondeterministic" in test.marks:
        return None
    if library.interleaved:
        ours, theirs = len(FAILURE_WORDS.findall(out)), len(FAILURE_WORDS.findall(native[1]))
        return None if ours == theirs else f"{ours} failure reports, natively {theirs}"
    return None if out == native[1] else "standard output differs from the native run's"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--libraries", default="petsc,hdf5")
    parser.add_argument("--mpis", default="mpich,openmpi")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--tests", default=".", help="regular expression on test names")
    parser.add_argument("--build-mpich", default="build-mpich")
    parser.add_argument("--build-openmpi", default="build-openmpi")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per run")
    args = parser.parse_args()
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
            tests = [test for test in listed
                     if args.full or "ci" in test.marks or f"ci:{mpi}" in test.marks]
            if mpi not in library.mpis():
                say(f"== {library.name} on {mpi}: not run (Debian builds {library.name} on "
                    f"{', '.join(library.mpis())} only)")
                continue
            shim = (TOP / getattr(args, "build_" + mpi) / "shim/librangecomm.so").resolve()
            if not shim.exists():
                say(f"library-tests: no {shim}: build it first")
                failed += 1
                continue
            say(f"== {library.name} on {mpi}: build ({len(tests)} tests)")
            start = time.monotonic()
            try:
                build = library.build(cache, mpi, tests)
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
                        if not link.exists():
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
                        if "native-fails" not in test.marks and status != 0:
                            bad = f"fails natively (exit status {status})"
                    else:
                        bad = verdict(library, test, native, (status, out))
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
