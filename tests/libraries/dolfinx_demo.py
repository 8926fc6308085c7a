#!/usr/bin/python3
"""Runs one of DOLFINx's Python demos (Debian's dolfinx-doc) as an MPI program and prints what
it computed, so that tools/library_tests.py can hold a run under the library to the native one.

  mpiexec -n N /usr/bin/python3 dolfinx_demo.py DEMO.py [--no-xdmf]

The demo runs as a script in a new folder under the current one, removed at the end, with its
own output (its prints and PETSc's)
silenced: its solvers' monitors print on every rank, interleaved. Then rank 0 prints, for each
finite element function the demo left in its globals (sorted by name), the norm of its vector
(a collective over the function's communicator), and, with XDMF output, each file the demo
wrote with its size. An exception in the demo (its own asserts included) ends the run with exit
status 1 after the traceback on standard error.

--no-xdmf replaces dolfinx.io.XDMFFile with one that writes nothing, so the demo runs without
parallel HDF5 I/O and its collectives.
"""
import os
import runpy
import shutil
import sys
import tempfile
import traceback
from pathlib import Path


class NoXdmf:
    """XDMFFile's interface, writing nothing."""

    def __init__(self, comm, filename, mode, *args, **kwargs):
        self.comm = comm

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass

    def __getattr__(self, name):
        if name.startswith("write_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    demo = Path(sys.argv[1])
    xdmf = "--no-xdmf" not in sys.argv[2:]

    from mpi4py import MPI
    import dolfinx
    import dolfinx.io
    if not xdmf:
        dolfinx.io.XDMFFile = NoXdmf

    world = MPI.COMM_WORLD
    folder = world.bcast(tempfile.mkdtemp(prefix="demo-", dir=".") if world.rank == 0 else None)
    os.chdir(folder)
    sys.stdout.flush()
    saved = os.dup(1)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    try:
        names = runpy.run_path(str(demo), run_name="__main__")
    except BaseException:
        sys.stdout.flush()
        os.dup2(saved, 1)
        traceback.print_exc()
        MPI.COMM_WORLD.Abort(1)
    sys.stdout.flush()
    os.dup2(saved, 1)
    os.close(quiet)

    functions = sorted((name, value) for name, value in names.items()
                       if isinstance(value, dolfinx.fem.Function))
    for name, function in functions:
        norm = function.x.norm()
        if world.rank == 0:
            print(f"{name}: vector norm {norm!r}")
    world.Barrier()
    if world.rank == 0:
        for path in sorted(Path(".").rglob("*")):
            if path.is_file():
                print(f"wrote {path}: {path.stat().st_size} bytes")
        os.chdir("..")
        shutil.rmtree(folder)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
