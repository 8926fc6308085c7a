#!/usr/bin/env python3
"""Builds MPICH's test suite (test/mpi of MPICH's source) for MPICH and Open MPI and runs it
natively and under librangecomm.so. Called by tools/mpich-testsuite.sh, which fetches the
sources; docs/mpich-suite.md describes what runs and what the counts mean.

The testlist format and the pass rule are MPICH's runtests script's (test/mpi/runtests.in):
a line is `program [np [key=value ...]]`; by default a run passes when its exit status is 0 and
its output (stdout and stderr together) is one " No Errors" line and nothing else but
"Test Passed" lines; resultTest=TestStatus / TestErrFatal require a nonzero exit status instead.
"""
import argparse
import concurrent.futures
import contextlib
import fcntl
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

DIRS_DEFAULT = ["comm", "group", "pt2pt", "coll", "attr", "errhan", "info", "init", "topo",
                "threads/comm", "errors/comm", "errors/group", "errors/pt2pt", "errors/coll"]
FORTRAN_KINDS = ("f77", "f90", "f08")  # directories of Fortran tests, by binding
DEFAULT_TIME_LIMIT = 180  # runtests' default, seconds
# What MPICH's configure substitutes into the Fortran tests' *.h.in headers (f77/attr/
# attraints.h.in, f77/io/iooffset.h.in, ...): integer kinds of MPI_ADDRESS_KIND and
# MPI_OFFSET_KIND, 8 on both MPIs here (x86_64; mpif.h says so), and integer*8 is available.
FORTRAN_HEADER_SUBST = {"F77_MPI_ADDRESS": "integer*8", "F77_MPI_OFFSET": "integer*8"}

MPIS = {
    "mpich": dict(label="MPICH", cc="mpicc.mpich", f77="mpif77.mpich", fc="mpif90.mpich",
                  launcher=["mpiexec.mpich"], cap=4, mpix=True, hydra=True, version=(4, 0)),
    "openmpi": dict(label="Open MPI", cc="mpicc.openmpi", f77="mpif77.openmpi",
                    fc="mpif90.openmpi",
                    launcher=["mpirun.openmpi"], extra=["--oversubscribe"], cap=8,
                    cflags=["-DOMPI_OMIT_MPI1_COMPAT_DECLS=0"],
                    mpix=False, hydra=False, version=(3, 1)),
}

# Configuration name -> (MPI, mode or None for native, extra launcher options, baseline).
CONFIGS = {
    "mpich-native": ("mpich", None, [], None),
    "mpich-off": ("mpich", "off", [], "mpich-native"),
    "mpich-accelerate": ("mpich", "accelerate", [], "mpich-native"),
    "mpich-shadow": ("mpich", "shadow", [], "mpich-native"),
    "openmpi-native": ("openmpi", None, [], None),
    "openmpi-off": ("openmpi", "off", [], "openmpi-native"),
    "openmpi-accelerate": ("openmpi", "accelerate", [], "openmpi-native"),
    "openmpi-shadow": ("openmpi", "shadow", [], "openmpi-native"),
    "openmpi-tcp-native": ("openmpi", None, ["--mca", "btl", "tcp,self"], None),
    "openmpi-tcp-accelerate": ("openmpi", "accelerate", ["--mca", "btl", "tcp,self"],
                               "openmpi-tcp-native"),
}


def matches(test_id, pattern):
    """A test id against a pattern of the expectations or subset file: the id itself (ids have
    brackets, which fnmatch reads as a character class), or a shell pattern."""
    return test_id == pattern or fnmatch.fnmatchcase(test_id, pattern)


def log(*words):
    print(*words, flush=True)


def fortran_kind(directory):
    """'f77', 'f90' or 'f08' for a directory of Fortran tests, else None."""
    top = directory.split("/", 1)[0]
    return top if top in FORTRAN_KINDS else None


def expand_dirs(suite, names):
    """--dirs words as directories: f77, f90 and f08 alone stand for all their subdirectories
    that have a testlist (io, rma and spawn included, as MPICH's configure would list them)."""
    dirs = []
    for name in names:
        if name in FORTRAN_KINDS:
            top = os.path.join(suite, name)
            dirs += [f"{name}/{d}" for d in sorted(os.listdir(top))
                     if any(os.path.exists(os.path.join(top, d, t))
                            for t in ("testlist", "testlist.in"))]
        elif name:
            dirs.append(name)
    return dirs


# ------------------------------------------------------------------------------------------
# Test lists and Makefile.am

class Test:
    """One line of a testlist, for one MPI (np already capped)."""

    def __init__(self, directory, program, np, opts, line):
        self.dir, self.program, self.np, self.opts, self.line = directory, program, np, opts, line
        extra = [f"{a}" for a in opts["args"]] + [f"env:{e}" for e in opts["envs"]]
        self.id = f"{directory}/{program}@{np}" + (f"[{' '.join(extra)}]" if extra else "")
        self.skip = None  # reason the testlist rules skip it (runtests' SkippedTest)


def read_testlist(suite, directory, mpi):
    """The tests of suite/directory/testlist(.in) for `mpi`, in file order, without duplicates
    (two lines that become the same run once the rank count is capped run once)."""
    spec = MPIS[mpi]
    for name in ("testlist", "testlist.in"):
        path = os.path.join(suite, directory, name)
        if os.path.exists(path):
            break
    else:
        return []
    subst = {"comm_overlap": "", "largetest": "#", "mpix": ""}
    tests, seen = [], set()
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            m = re.match(r"@(\w+)@(.*)", line)
            if m:
                line = subst.get(m.group(1), "#") + m.group(2)
            line = re.sub(r"#.*", "", line).strip()
            if not line or line.startswith("!"):
                continue
            words = line.split()
            program = words[0]
            np = int(words[1]) if len(words) > 1 and words[1].isdigit() else 2
            opts = {"args": [], "envs": [], "mpiexecargs": []}
            for word in words[2:]:
                if "=" not in word:
                    continue  # runtests ignores words without '='
                key, value = word.split("=", 1)
                if key in ("arg", "env", "mpiexecarg"):
                    opts[key + "s"].append(value)
                else:
                    opts[key] = value
            capped = min(np, spec["cap"])
            test = Test(directory, program, capped, opts, line)
            if test.id in seen:
                continue
            seen.add(test.id)
            test.listed_np = np
            test.skip = testlist_skip(test, spec)
            tests.append(test)
    return tests


def testlist_skip(test, spec):
    """Why runtests (configured for this MPI as MPICH's configure would) skips the test."""
    o = test.opts
    if os.path.isdir(test.program):
        return "a directory entry"
    if o.get("xfail"):
        return f"xfail={o['xfail']} in MPICH's testlist (runtests skips it by default)"
    if o.get("mpix", "").lower() == "true" and not spec["mpix"]:
        return "mpix=true in MPICH's testlist: MPICH extensions"
    if "mpiversion" in o:
        want = tuple(int(x) for x in o["mpiversion"].split("."))
        if spec["version"] < want:
            return f"needs MPI {o['mpiversion']}"
    if "mem" in o:
        total = 0
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) / 2**20
        if float(o["mem"]) > total:
            return f"needs {o['mem']} GB of memory"
    if o["mpiexecargs"] and not spec["hydra"]:
        return f"launcher options for MPICH's Hydra: {' '.join(o['mpiexecargs'])}"
    return None


SOURCE_SUFFIXES = (".c", ".f", ".f90")


def read_makefile_am(path):
    """program -> {'sources': [...], 'cppflags': [...], 'libs': [...]}, plus '' -> directory-wide
    CPPFLAGS, 'threads' -> True if the directory links the thread helpers, 'ext' -> the source
    suffix of programs without _SOURCES (AM_DEFAULT_SOURCE_EXT) and 'fflags' -> the -I
    options of AM_FFLAGS."""
    info = {"": {"cppflags": [], "threads": False, "ext": ".c", "fflags": []}}
    if not os.path.exists(path):
        return info
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "Makefile_threads.mtest" in line:
            info[""]["threads"] = True
        m = re.match(r"(\w+?)_(SOURCES|CPPFLAGS|LDADD)\s*\+?=\s*(.*)", line)
        if m:
            prog, kind, value = m.groups()
            entry = info.setdefault(prog, {"sources": None, "cppflags": [], "libs": []})
            words = value.split()
            if kind == "SOURCES":
                entry["sources"] = [w for w in words if w.endswith(SOURCE_SUFFIXES + (".h",))]
            elif kind == "CPPFLAGS":
                entry["cppflags"] = [w for w in words if w.startswith("-D")]
            else:
                entry["libs"] = [w for w in words if w.startswith("-l")]
            continue
        m = re.match(r"AM_CPPFLAGS\s*\+?=\s*(.*)", line)
        if m:
            info[""]["cppflags"] += [w for w in m.group(1).split() if w.startswith("-D")]
        m = re.match(r"AM_DEFAULT_SOURCE_EXT\s*=\s*(\S+)", line)
        if m:
            info[""]["ext"] = m.group(1)
        m = re.match(r"AM_FFLAGS\s*\+?=\s*(.*)", line)
        if m:
            info[""]["fflags"] += [w for w in m.group(1).split()
                                   if w.startswith("-I") and w != "-I."]
    return info


# ------------------------------------------------------------------------------------------
# Expectations

class Expectations:
    """tests/mpich-suite/expectations.txt: `na`, `native` and `library-bug` entries."""

    def __init__(self, path):
        self.entries = []
        with open(path) as f:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                words = line.split(None, 4 if line.startswith("library-bug") else 3)
                kind = words[0]
                if kind not in ("na", "native", "library-bug") or len(words) < 4 or \
                        (kind == "library-bug" and len(words) < 5):
                    raise SystemExit(f"{path}:{number}: cannot read: {line}")
                configs = words[3].split(",") if kind == "library-bug" else None
                reason = words[-1]
                self.entries.append(dict(kind=kind, mpi=words[1], test=words[2],
                                         configs=configs, reason=reason, line=number,
                                         used=False))

    def find(self, kind, mpi, test_id, config=None):
        for e in self.entries:
            if e["kind"] != kind or not fnmatch.fnmatchcase(mpi, e["mpi"]) or \
                    not matches(test_id, e["test"]):
                continue
            if config is not None and not any(
                    c in ("*", config) or config == f"{mpi}-{c}" for c in e["configs"]):
                continue
            e["used"] = True
            return e
        return None


# ------------------------------------------------------------------------------------------
# Building

class Builder:
    def __init__(self, args, mpi):
        self.args, self.mpi, self.spec = args, mpi, MPIS[mpi]
        self.out = os.path.join(args.work, f"build-{mpi}")
        self.suite = args.suite
        self.includes = ["-I" + args.config_headers, "-I" + os.path.join(self.suite, "include"),
                         "-I" + os.path.join(self.suite, "dtpools", "include")]
        self.cflags = ["-O1", "-g0", "-w", "-Werror=implicit-function-declaration"]
        # MPICH's tests and dtpools still call MPI-1 names that MPI-3 removed (MPI_Type_hvector,
        # MPI_Attr_get, ...); Open MPI 4.1 has them in the library but hides the declarations.
        self.cflags += self.spec.get("cflags", [])
        # gfortran 10 and later reject calls of one external routine with different argument
        # types (MPI_Send of an integer and of a real buffer through mpif.h); MPICH's
        # configure adds these flags for the same reason.
        self.fflags = ["-O1", "-g0", "-w", "-fallow-argument-mismatch", "-fallow-invalid-boz"]
        self.fortran_helpers = {}
        self.compile_seconds = 0.0

    def run(self, cmd, cwd):
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace")
        return proc.returncode, proc.stdout, time.monotonic() - start

    @staticmethod
    def command_text(cmds):
        """The text a target's .cmd stamp holds: one command, or several (a list of lists)
        joined with && (a Fortran program's C objects, then its link)."""
        if cmds and isinstance(cmds[0], list):
            return " && ".join(shlex.join(c) for c in cmds)
        return shlex.join(cmds)

    def up_to_date(self, target, cmd, inputs):
        stamp = target + ".cmd"
        if not os.path.exists(target) or not os.path.exists(stamp):
            return False
        with open(stamp) as f:
            if f.read() != self.command_text(cmd):
                return False
        built = os.path.getmtime(target)
        return all(os.path.getmtime(i) <= built for i in inputs if os.path.exists(i))

    def remember(self, target, cmd):
        with open(target + ".cmd", "w") as f:
            f.write(self.command_text(cmd))

    def build_util(self):
        """mtest and dtpools objects, once per MPI. Returns False if they do not compile."""
        util = os.path.join(self.out, "util")
        os.makedirs(util, exist_ok=True)
        # dtpools includes "../dtpoolsconf.h" relative to its include directory, and the C
        # sources of the Fortran directories "../../include/mpitestconf.h" relative to theirs.
        for name, where in (("dtpoolsconf.h", "dtpools"), ("mpitestconf.h", "include")):
            conf = os.path.join(self.suite, where, name)
            with open(os.path.join(self.args.config_headers, name)) as f:
                text = f.read()
            if not os.path.exists(conf) or open(conf).read() != text:
                with open(conf, "w") as f:
                    f.write(text)
        headers = [os.path.join(self.args.config_headers, h)
                   for h in ("mpitestconf.h", "dtpoolsconf.h")]
        jobs = []
        for name in ("mtest.c", "mtest_common.c", "dtypes.c", "mtest_single.c",
                     "mtest_thread.c"):
            jobs.append((os.path.join(self.suite, "util", name), []))
        dtp = os.path.join(self.suite, "dtpools", "src")
        for name in sorted(os.listdir(dtp)):
            if name.endswith(".c"):
                jobs.append((os.path.join(dtp, name), ["-I" + dtp]))
        objects = {}
        for source, extra in jobs:
            obj = os.path.join(util, os.path.basename(source)[:-2] + ".o")
            cmd = [self.spec["cc"], *self.cflags, *self.includes, *extra, "-c", source,
                   "-o", obj]
            if not self.up_to_date(obj, cmd, [source, *headers]):
                status, output, seconds = self.run(cmd, util)
                self.compile_seconds += seconds
                if status != 0:
                    log(f"mpich-suite: {self.mpi}: {source} does not compile:\n{output}")
                    return False
                self.remember(obj, cmd)
            objects[os.path.basename(obj)] = obj
        self.mtest = [objects["mtest.o"], objects["mtest_common.o"], objects["dtypes.o"]]
        self.single = objects["mtest_single.o"]
        self.thread = objects["mtest_thread.o"]
        lib = os.path.join(util, "libdtpools.a")
        dtp_objs = [o for n, o in sorted(objects.items()) if n.startswith("dtpools")]
        if not os.path.exists(lib) or any(os.path.getmtime(o) > os.path.getmtime(lib)
                                          for o in dtp_objs):
            if os.path.exists(lib):
                os.remove(lib)
            subprocess.run(["ar", "rcs", lib, *dtp_objs], check=True)
        self.dtpools = lib
        return True

    def fortran_helper(self, kind):
        """util/mtest_<kind> (MTest_Init, MTest_Finalize, ... in Fortran) compiled once per MPI
        with the MPI's wrapper for the kind. Returns (object or None, compiler output)."""
        if kind in self.fortran_helpers:
            return self.fortran_helpers[kind]
        util = os.path.join(self.out, "util", kind)
        os.makedirs(util, exist_ok=True)
        source = os.path.join(self.suite, "util",
                              "mtest_f77.f" if kind == "f77" else f"mtest_{kind}.f90")
        obj = os.path.join(util, f"mtest_{kind}.o")
        cmd = [self.fortran_compiler(kind), *self.fflags, "-J" + util, "-c", source, "-o", obj]
        result = (obj, "")
        if not self.up_to_date(obj, cmd, [source]):
            status, output, seconds = self.run(cmd, util)
            self.compile_seconds += seconds
            if status == 0:
                self.remember(obj, cmd)
            else:
                log(f"mpich-suite: {self.mpi}: {source} does not compile:\n{output}")
                result = (None, output)
        self.fortran_helpers[kind] = result
        return result

    def fortran_compiler(self, kind):
        """MPI's Fortran wrapper for a directory kind: mpif77 for f77, mpif90 for f90 and f08."""
        return self.spec["f77" if kind == "f77" else "fc"]

    def fortran_headers(self, directory, extra_dirs):
        """Writes the headers MPICH's configure makes from *.h.in (attraints.h, typeaints.h,
        iooffset.h, ...) into the build directory of `directory` and of `extra_dirs`: those of
        the directory itself and of its f77 counterpart (the f90 and f08 sources are made from
        the f77 ones and include the same headers). Returns the headers written."""
        written = []
        for target in [directory] + extra_dirs:
            outdir = os.path.join(self.out, target)
            os.makedirs(outdir, exist_ok=True)
            sub = target.split("/", 1)[1] if "/" in target else ""
            for srcdir in {os.path.join(self.suite, target), os.path.join(self.suite, "f77", sub)}:
                if not os.path.isdir(srcdir):
                    continue
                for name in sorted(os.listdir(srcdir)):
                    if not name.endswith(".h.in"):
                        continue
                    with open(os.path.join(srcdir, name)) as f:
                        text = re.sub(r"@(\w+)@", lambda m: FORTRAN_HEADER_SUBST.get(
                            m.group(1), m.group(0)), f.read())
                    header = os.path.join(outdir, name[:-3])
                    if not os.path.exists(header) or open(header).read() != text:
                        with open(header, "w") as f:
                            f.write(text)
                    written.append(header)
        return written

    def program_job(self, directory, program, makefiles):
        """The compile commands of directory/program, its binary and its inputs."""
        am = makefiles.setdefault(directory, read_makefile_am(
            os.path.join(self.suite, directory, "Makefile.am")))
        entry = am.get(program, {"sources": None, "cppflags": [], "libs": []})
        srcdir = os.path.join(self.suite, directory)
        sources = [os.path.join(srcdir, s)
                   for s in (entry["sources"] or [program + am[""]["ext"]])]
        outdir = os.path.join(self.out, directory)
        binary = os.path.join(outdir, program)
        kind = fortran_kind(directory)
        if kind and any(s.endswith((".f", ".f90")) for s in sources):
            return self.fortran_job(directory, program, am, entry, sources, binary, outdir)
        threads = am[""]["threads"]
        cppflags = am[""]["cppflags"] + entry["cppflags"]
        if threads and "-DMTEST_USE_THREAD" not in cppflags:
            cppflags.append("-DMTEST_USE_THREAD")
        cmd = [self.spec["cc"], *self.cflags, *cppflags, *self.includes,
               *[s for s in sources if s.endswith(".c")], "-o", binary,
               *self.mtest, self.thread if threads else self.single, self.dtpools,
               *entry["libs"], "-lm"] + (["-lpthread"] if threads else [])
        inputs = sources + self.mtest + [self.single, self.thread, self.dtpools,
                                         os.path.join(self.args.config_headers, "mpitestconf.h")]
        return binary, [cmd], inputs, outdir

    def shared_c_source(self, directory, source):
        """A C source that a Fortran directory's Makefile copies at build time from the f90 or
        f77 directory of the same name (f08/ext/c2f902c.c from f90/ext, ctypesfromc.c from
        f77/ext): the original's path. Any other source as it is."""
        if not source.endswith(".c") or os.path.exists(source):
            return source
        sub = directory.split("/", 1)[1]
        for kind in ("f90", "f77"):
            original = os.path.join(self.suite, kind, sub, os.path.basename(source))
            if os.path.exists(original):
                return original
        return source

    def fortran_job(self, directory, program, am, entry, sources, binary, outdir):
        """The commands of a Fortran program: its C sources (bottomc.c, c2f2c.c, ...) compiled
        with the MPI's C compiler, then the Fortran sources compiled and linked with the MPI's
        Fortran wrapper and util/mtest_<kind>. Modules go to a directory of the program's own,
        so that two compilers at work in one directory do not share them."""
        kind = fortran_kind(directory)
        helper, _ = self.fortran_helper(kind)
        extra = [os.path.normpath(os.path.join(directory, f[2:])) for f in am[""]["fflags"]]
        headers = self.fortran_headers(directory, extra)
        moddir = os.path.join(outdir, ".mod", program)
        sources = [self.shared_c_source(directory, s) for s in sources]
        cmds, objects = [], []
        for source in sources:
            if source.endswith(".c"):
                obj = os.path.join(moddir, os.path.basename(source)[:-2] + ".o")
                # gfortran's external names: lower case with one trailing underscore.
                cmds.append([self.spec["cc"], *self.cflags, "-DF77_NAME_LOWER_USCORE",
                             *am[""]["cppflags"],
                             *entry["cppflags"], *self.includes, "-c", source, "-o", obj])
                objects.append(obj)
        fortran = [s for s in sources if s.endswith((".f", ".f90"))]
        includes = ["-I" + outdir, "-I" + os.path.join(self.suite, directory)] + \
            ["-I" + os.path.join(self.out, d) for d in extra]
        cmds.append([self.fortran_compiler(kind), *self.fflags, *includes, "-J" + moddir,
                     *fortran, *objects, "-o", binary, helper or "mtest-helper-missing",
                     *entry["libs"]])
        return binary, cmds, sources + headers + ([helper] if helper else []), outdir

    def build_programs(self, programs):
        """Compiles (directory, program) pairs, at most --jobs at once. Returns
        {(directory, program): None if built, else the compiler's output}."""
        makefiles, jobs, results = {}, [], {}
        for directory, program in programs:
            binary, cmds, inputs, outdir = self.program_job(directory, program, makefiles)
            os.makedirs(outdir, exist_ok=True)
            if self.up_to_date(binary, cmds, inputs):
                results[(directory, program)] = None
            else:
                jobs.append(((directory, program), binary, cmds, outdir))

        def one(job):
            key, binary, cmds, outdir = job
            missing = [s for cmd in cmds for s in cmd
                       if s.endswith(SOURCE_SUFFIXES) and not os.path.exists(s)]
            if missing:
                return key, binary, cmds, 1, f"no source {missing[0]}", 0.0
            total = 0.0
            for cmd in cmds:
                # A Fortran program's module directory, where its C objects go too.
                os.makedirs(os.path.dirname(cmd[cmd.index("-o") + 1]), exist_ok=True)
                for word in cmd:
                    if word.startswith("-J"):
                        os.makedirs(word[2:], exist_ok=True)
                status, output, seconds = self.run(cmd, outdir)
                total += seconds
                if status != 0:
                    break
            return key, binary, cmds, status, output, total

        with concurrent.futures.ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            for key, binary, cmds, status, output, seconds in pool.map(one, jobs):
                self.compile_seconds += seconds
                if status == 0:
                    self.remember(binary, cmds)
                    results[key] = None
                else:
                    if os.path.exists(binary):
                        os.remove(binary)
                    results[key] = output
        return results


# ------------------------------------------------------------------------------------------
# Running

def descendants(pid):
    """Every process below pid (by parent links in /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
            except (OSError, IndexError):
                pass
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            found.append(c)
            todo.append(c)
    return found


@contextlib.contextmanager
def holding(lock_path):
    """An exclusive flock on lock_path (none if it is empty) while a test runs: on a machine
    shared with other MPI jobs that take the same lock, one MPI job runs at a time and the
    waiting does not count against a test's time limit."""
    if not lock_path:
        yield
        return
    with open(lock_path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_command(cmd, env, cwd, timeout, output_path):
    """Runs cmd in its own session with output to output_path; kills everything it started
    after `timeout` seconds. Returns (exit status or None on timeout, seconds)."""
    start = time.monotonic()
    with open(output_path, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in descendants(proc.pid) + [proc.pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            status = None
    # Ranks a launcher left behind in the session (they keep busy-polling otherwise).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return status, time.monotonic() - start


def judge(test, status, output):
    """(passed, reason) by runtests' rules."""
    if status is None:
        return False, "timed out"
    kind = test.opts.get("resultTest")
    lines = [l for l in output.splitlines() if "FORTRAN STOP" not in l]
    if kind in ("TestStatus", "TestErrFatal"):
        return (status != 0,
                "exit status 0, but the test requires a nonzero one" if status == 0 else "")
    found_noerror, unexpected = False, None
    for line in lines:
        if re.match(r"^\s*No [Ee]rrors\s*$", line) and not found_noerror:
            found_noerror = True
        elif not re.match(r"^\s*Test Passed\s*$", line) and \
                not re.search(r"(requesting checkpoint|checkpoint completed)\s*$", line):
            unexpected = unexpected or line
    if kind == "TestStatusNoErrors":
        if unexpected is not None or not found_noerror:
            return False, "output is not just \"No Errors\""
        return status != 0, "exit status 0, but the test requires a nonzero one"
    if unexpected is not None:
        return False, f"unexpected output: {unexpected.strip()[:100]}"
    if not found_noerror:
        return False, "no \"No Errors\" line"
    if status != 0:
        return False, f"exit status {status}"
    return True, ""


def launcher_prefix(args, config):
    """The launcher words of a configuration: rangecomm-run --dry-run gives the preloading
    options exactly as rangecomm-run would add them."""
    mpi, mode, extra, _ = CONFIGS[config]
    spec = MPIS[mpi]
    base = spec["launcher"]
    if mode is not None:
        build = getattr(args, f"build_{mpi}")
        runner = os.path.join(build, "shim", "rangecomm-run")
        library = os.path.join(build, "shim", "librangecomm.so")
        env = {k: v for k, v in os.environ.items() if k != "RANGECOMM_MODE"}
        proc = subprocess.run([runner, "--mode", mode, "--library", library, "--dry-run", "--",
                               *base], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        if proc.returncode != 0:
            raise SystemExit(f"mpich-suite: {runner} --dry-run failed: {proc.stderr.strip()}")
        base = proc.stdout.split("\n")[:-1]
    return base + spec.get("extra", []) + extra


def tail(path, count):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().rstrip("\n").splitlines()
    except OSError:
        return []
    return lines[-count:]


# ------------------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", required=True, help="MPICH's test/mpi directory")
    p.add_argument("--work", required=True, help="where the tests are built and run")
    p.add_argument("--config-headers", required=True, help="directory of mpitestconf.h")
    p.add_argument("--expectations", required=True)
    p.add_argument("--subset", help="file of test-id patterns to run (the CI subset)")
    p.add_argument("--build-mpich", required=True)
    p.add_argument("--build-openmpi", required=True)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--dirs", help="comma-separated directories of the suite (f77, f90, f08: "
                   "all of theirs); default: the C directories, or with --fortran the Fortran "
                   "ones")
    p.add_argument("--fortran", action="store_true",
                   help="run the Fortran tests (f77, f90 and f08 directories) by default")
    p.add_argument("--tests", default="*", help="comma-separated test-id patterns")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--time-limit", type=int, default=0,
                   help="cap on every test's time limit in seconds (0: the testlist's)")
    p.add_argument("--tail", type=int, default=25)
    p.add_argument("--lock", default=os.environ.get("MPICH_SUITE_LOCK", ""),
                   help="hold an flock on this file while each test runs (MPICH_SUITE_LOCK)")
    p.add_argument("--build-only", action="store_true", help="build, report and stop")
    p.add_argument("--results", help="write every run's result and time to this JSON file")
    p.add_argument("--baselines", help="take the native configurations' outcomes from this "
                   "--results file of an earlier run instead of running them again")
    args = p.parse_args()
    args.jobs = max(1, min(args.jobs, 2))
    for name in ("suite", "work", "config_headers", "build_mpich", "build_openmpi"):
        setattr(args, name, os.path.abspath(getattr(args, name)))

    dirs = expand_dirs(args.suite, args.dirs.split(",") if args.dirs else
                       list(FORTRAN_KINDS) if args.fortran else DIRS_DEFAULT)
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            raise SystemExit(f"mpich-suite: unknown configuration {c} "
                             f"(known: {', '.join(CONFIGS)})")
    # A configuration under the library needs its baseline: run in this invocation, or read
    # from an earlier one's results (the native outcome does not depend on the library).
    outcome = {}  # (config, test id) -> passed
    reused = set()
    if args.baselines:
        with open(args.baselines) as f:
            for r in json.load(f)["results"]:
                if CONFIGS.get(r["config"], (None, "x"))[1] is None:
                    outcome[(r["config"], r["test"])] = r["passed"]
                    reused.add(r["config"])
    for c in list(configs):
        base = CONFIGS[c][3]
        if base and base not in configs and base not in reused:
            configs.insert(configs.index(c), base)
    if reused:
        log(f"   baselines from {args.baselines}: {', '.join(sorted(reused))}")
    expectations = Expectations(args.expectations)
    patterns = [t for t in args.tests.split(",") if t]
    subset = None
    if args.subset:
        with open(args.subset) as f:
            subset = [l.split("#", 1)[0].strip() for l in f]
            subset = [l for l in subset if l]

    def wanted(test_id):
        return any(matches(test_id, t) for t in patterns) and \
            (subset is None or any(matches(test_id, t) for t in subset))

    env_base = dict(os.environ)
    env_base.pop("RANGECOMM_MODE", None)
    env_base.pop("LD_PRELOAD", None)
    if os.getuid() == 0:
        env_base.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    counts = {c: {"passed": 0, "failed": 0, "na": 0, "seconds": 0.0} for c in configs}
    unexpected = []   # (config, test id, reason, output file)
    expected = []     # (config, test id, entry)
    bugs = []         # (config, test id, entry, reason, output file)
    problems = []     # expectation-file problems that fail the run
    notes = []
    results = []
    times = {}

    for mpi in MPIS:
        mpi_configs = [c for c in configs if CONFIGS[c][0] == mpi]
        if not mpi_configs:
            continue
        tests = []
        for directory in dirs:
            tests += [t for t in read_testlist(args.suite, directory, mpi) if wanted(t.id)]
        builder = Builder(args, mpi)
        start = time.monotonic()
        log(f"== {MPIS[mpi]['label']}: building {len(tests)} tests "
            f"({len({(t.dir, t.program) for t in tests if not t.skip})} programs)")
        if not builder.build_util():
            problems.append(f"{mpi}: MPICH's util/ helpers do not compile")
            continue
        na = {}
        for t in tests:
            entry = expectations.find("na", mpi, t.id)
            if t.skip:
                na[t.id] = t.skip
            elif entry:
                na[t.id] = entry["reason"]
        built = builder.build_programs(sorted({(t.dir, t.program) for t in tests
                                               if t.id not in na}))
        for t in tests:
            if t.id in na:
                continue
            error = built[(t.dir, t.program)]
            if error is not None:
                na[t.id] = "does not compile"
                first = next((l for l in error.splitlines() if "undefined reference" in l or
                              ("error" in l and "collect2" not in l)), error.strip())
                first = re.sub(r".*?(undefined reference)", r"\1", first)
                problems.append(f"{mpi}: {t.id} does not compile and is not an `na` entry of "
                                f"the expectations file: {first.strip()[:160]}")
        times[f"compile-{mpi}"] = time.monotonic() - start
        log(f"   compiled in {time.monotonic() - start:.0f} s "
            f"({builder.compile_seconds:.0f} s of compiler time)")

        if args.build_only:
            continue
        for config in mpi_configs:
            _, mode, _, baseline = CONFIGS[config]
            prefix = launcher_prefix(args, config)
            c = counts[config]
            start = time.monotonic()
            for t in tests:
                if t.id in na or (baseline and not outcome.get((baseline, t.id))):
                    c["na"] += 1
                    continue
                limit = int(t.opts.get("timeLimit", DEFAULT_TIME_LIMIT)) \
                    if str(t.opts.get("timeLimit", "")).isdigit() else DEFAULT_TIME_LIMIT
                if args.time_limit:
                    limit = min(limit, args.time_limit)
                env = dict(env_base, MPIEXEC_TIMEOUT=str(limit))
                for e in t.opts["envs"]:
                    key, _, value = e.partition("=")
                    env[key] = value
                rundir = os.path.join(builder.out, t.dir)
                cmd = prefix + t.opts["mpiexecargs"] + ["-n", str(t.np),
                                                        "./" + t.program] + t.opts["args"]
                logdir = os.path.join(args.work, "logs", config)
                os.makedirs(logdir, exist_ok=True)
                outfile = os.path.join(logdir, re.sub(r"[^\w@.=-]+", "_", t.id) + ".out")
                with holding(args.lock):
                    status, seconds = run_command(cmd, env, rundir, limit + 20, outfile)
                with open(outfile, errors="replace") as f:
                    output = f.read()
                passed, reason = judge(t, status, output)
                if status is None:
                    reason = f"timed out after {limit} s"
                outcome[(config, t.id)] = passed
                results.append(dict(config=config, test=t.id, passed=passed, reason=reason,
                                    seconds=round(seconds, 2), np=t.np))
                c["seconds"] += seconds
                if passed:
                    c["passed"] += 1
                    if baseline is None and expectations.find("native", mpi, t.id):
                        notes.append(f"{config}: {t.id} passes natively now; its `native` "
                                     "entry in the expectations file can go")
                    entry = expectations.find("library-bug", mpi, t.id, config) \
                        if baseline else None
                    if entry:
                        notes.append(f"{config}: {t.id} PASSES now; its `library-bug` entry "
                                     f"(line {entry['line']}) can go")
                    continue
                c["failed"] += 1
                if baseline is None:
                    entry = expectations.find("native", mpi, t.id)
                    if entry:
                        expected.append((config, t.id, entry))
                        continue
                    unexpected.append((config, t.id, reason + " (natively; not a `native` "
                                       "entry of the expectations file)", outfile, cmd))
                else:
                    entry = expectations.find("library-bug", mpi, t.id, config)
                    if entry:
                        bugs.append((config, t.id, entry, reason, outfile, cmd))
                        continue
                    unexpected.append((config, t.id, reason + f" (passes in {baseline})",
                                       outfile, cmd))
            times[f"run-{config}"] = time.monotonic() - start
            if args.results:  # after each configuration, so that an interrupted run keeps them
                with open(args.results, "w") as f:
                    json.dump(dict(times=times, results=results), f, indent=1)
            log(f"   {config}: {c['passed']} passed, {c['failed']} failed, {c['na']} not "
                f"applicable ({time.monotonic() - start:.0f} s)")

    if args.results:
        with open(args.results, "w") as f:
            json.dump(dict(times=times, results=results), f, indent=1)

    # Report
    for config, test_id, reason, outfile, cmd in unexpected:
        lines = tail(outfile, args.tail)
        log(f"---- FAILED {config}: {test_id}: {reason}")
        log(f"     command: {shlex.join(cmd)}")
        log(f"     last {len(lines)} lines of its output ({outfile}):")
        for line in lines:
            log("  | " + line)
    if bugs:
        log("")
        log("!!!! " + "=" * 86)
        log(f"!!!! KNOWN LIBRARY BUGS: {len(bugs)} runs pass natively but fail under "
            "librangecomm.so")
        log("!!!! (library-bug entries of the expectations file; they do not fail this run)")
        for config, test_id, entry, reason, outfile, cmd in bugs:
            log(f"!!!! {config}: {test_id}: {reason}; {entry['reason']}")
            for line in tail(outfile, min(args.tail, 8)):
                log("!!!!   | " + line)
        log("!!!! " + "=" * 86)
        log("")
    for problem in problems:
        log(f"mpich-suite: {problem}")
    for note in notes:
        log(f"mpich-suite: note: {note}")
    if expected:
        log(f"mpich-suite: {len(expected)} native failures are expected (`native` entries)")

    total_passed = 0
    for config in configs:
        c = counts[config]
        log(f"{config}: {c['passed']} passed, {c['failed']} failed, {c['na']} not applicable")
        total_passed += c["passed"]
    failed = len(unexpected) + len(problems)
    log(f"{total_passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
