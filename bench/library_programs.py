#!/usr/bin/env python3
"""library_programs: programs built on the libraries applications use, run natively and under
`rangecomm-run --mode accelerate` in turn, the same program with the same ranks and input:
how many objects each keeps alive at once and what one costs. The programs (plain library
code, no rangecomm call) are built next to this driver where the library is installed for the
MPI of the build:

  lib_hdf5_files     N HDF5 files open at once, each created on MPI_COMM_WORLD (HDF5 and
                     MPI-IO duplicate the communicator for each: two per file natively)
  lib_fftw_plans     N FFTW-MPI plans of a distributed 2-D transform alive at once
  lib_petsc_solvers  N PETSc solvers, each on a sub-communicator of its own, alive at once

  library_programs.py --compare LIBRANGECOMM [--programs LIST] [--objects N,N,N] [--ranks LIST]
                      [--runs R] [--format table|csv] -- MPIEXEC [ARGS...]

prints per program and rank count the median over runs of the objects kept alive and of the
microseconds to make one (create and first use), natively and accelerated, with the ratios. A
benchmark: it measures. A run that dies counts the objects of its last progress line.
"""
import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = ("hdf5_files", "fftw_plans", "petsc_solvers")
DEFAULT_OBJECTS = {"hdf5_files": 10000, "fftw_plans": 4000, "petsc_solvers": 2000}


def run(command):
    """(objects alive, microseconds per object, how the run ended). A run that dies (natively,
    when MPI's communicators run out, some MPIs crash instead of returning an error) counts
    what its last progress line says."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = None
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] in ("progress", "result"):
            last = (int(fields[2]), float(fields[3]), fields[0])
    if done.returncode == 0 and last is not None and last[2] == "result":
        return last[0], last[1], "ok"
    status = done.returncode if done.returncode >= 0 else f"signal {-done.returncode}"
    if last is None:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"library_programs: {' '.join(command)} ended with {status} "
                         "before its first progress line")
    return last[0], last[1], f"died ({status})"


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[2].strip())
    parser.add_argument("--compare", required=True, metavar="LIBRANGECOMM")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--objects", default=None,
                        help="objects per program, in --programs order (default: %s)" %
                        ",".join(str(DEFAULT_OBJECTS[p]) for p in PROGRAMS))
    parser.add_argument("--ranks", default="2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--format", choices=("table", "csv"), default="table")
    parser.add_argument("launcher", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    launcher = args.launcher[1:] if args.launcher[:1] == ["--"] else args.launcher
    if not launcher:
        parser.error("the MPI launcher follows --")
    library = Path(args.compare).resolve()
    accelerate = [str(library.parent / "rangecomm-run"), "--mode", "accelerate", "--library",
                  str(library), "--"]
    wanted = args.programs.split(",")
    objects = dict(DEFAULT_OBJECTS)
    if args.objects:
        objects.update(zip(wanted, (int(n) for n in args.objects.split(","))))
    present = [p for p in wanted if (HERE / f"lib_{p}").exists()]
    for p in wanted:
        if p not in present:
            print(f"library_programs: lib_{p} is not built (its library is not installed for "
                  "this MPI)", file=sys.stderr)

    rows = []  # (program, ranks, variant, [(alive, us) per run])
    for program in present:
        for ranks in (int(r) for r in args.ranks.split(",")):
            runs = {"native": [], "accelerate": []}
            command = launcher + ["-n", str(ranks), str(HERE / f"lib_{program}"),
                                  str(objects[program])]
            for _ in range(args.runs):  # alternating, so that drift hits both alike
                runs["native"].append(run(command))
                runs["accelerate"].append(run(accelerate + command))
            for variant, results in runs.items():
                rows.append((program, ranks, variant, results))
                print(f"{program} {ranks} ranks {variant}: " + ", ".join(
                    f"{alive} alive, {us:.1f} us, {end}" for alive, us, end in results),
                    file=sys.stderr)

    def medians(results):
        return [a for a, _, _ in results], [u for _, u, _ in results]

    native = {(p, r): medians(res) for p, r, v, res in rows if v == "native"}
    if args.format == "csv":
        print("experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit")
        for program, ranks, variant, results in rows:
            alive, us = medians(results)
            base_alive, base_us = native[(program, ranks)]
            param = objects[program]
            print(f"preload_{program}_alive,{variant},{param},{ranks},"
                  f"{statistics.median(alive)},{min(alive)},{max(alive)},"
                  f"{statistics.median(alive) / statistics.median(base_alive):.4f},count")
            print(f"preload_{program},{variant},{param},{ranks},{statistics.median(us):.3f},"
                  f"{min(us):.3f},{max(us):.3f},"
                  f"{statistics.median(us) / statistics.median(base_us):.4f},us")
        return 0
    print(f"\nmedian over {args.runs} runs      objects asked   alive natively / accelerated"
          "   us per object natively / accelerated   faster by")
    for program, ranks, variant, results in rows:
        if variant != "accelerate":
            continue
        alive, us = medians(results)
        base_alive, base_us = native[(program, ranks)]
        print(f"{program:<14} {ranks:>2} ranks {objects[program]:>8} "
              f"{statistics.median(base_alive):>12} / {statistics.median(alive):<10} "
              f"{statistics.median(base_us):>14.1f} / {statistics.median(us):<12.1f} "
              f"{statistics.median(base_us) / statistics.median(us):>8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
