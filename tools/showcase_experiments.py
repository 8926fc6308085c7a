"""What the showcase runs: one entry per benchmark run, and the rows of the summary table.

To add a driver, add one Experiment line to EXPERIMENTS. A driver lives in bench/, prints
CSV rows ``experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native[,unit,...]``
for ``--format csv`` and is built as <build dir>/bench/<driver>. Without headlines, the summary
takes every CSV experiment of the run, its variant named native* (or the one with ratio 1) and
its variant named range*, at the middle parameter.
"""

from dataclasses import dataclass, field


@dataclass
class Headline:
    """One summary row: the median of `native` (the smallest, if several) against `range`."""
    label: str
    experiment: str
    native: tuple
    range: str
    param: str = None  # None, or not present in the run: the middle one of those present
    unit: str = None   # None: the row's unit column, else "us" ("%" for overlap_*)


@dataclass
class Experiment:
    key: str          # names the run in progress lines and file names
    title: str        # what it shows
    driver: str       # executable in <build dir>/bench/
    args: list = field(default_factory=list)    # full run, both MPIs
    mpich: list = None                          # full run on MPICH instead of args
    quick: list = field(default_factory=list)   # --quick (smoke test)
    mpich_quick: list = None                    # --quick on MPICH instead of quick
    headlines: list = field(default_factory=list)
    adapt: object = None  # rows of another CSV layout -> the common one
    # The driver is not started under mpiexec: it runs its own MPI jobs (with and without
    # LD_PRELOAD of librangecomm.so), given --compare <library> -- <launcher>.
    launches_mpi: bool = False


def sort_rows(rows):
    """sort_bench's layout (algorithm,backend,p,n_per_p,median_s,...) -> the common one."""
    out = []
    for r in rows:
        us = lambda k: float(r[k]) * 1e6
        out.append({"experiment": "sort", "variant": "%s/%s" % (r["algorithm"], r["backend"]),
                    "param": r["n_per_p"], "ranks": r["p"], "median_us": us("median_s"),
                    "min_us": us("min_s"), "max_us": us("max_s"),
                    "ratio_vs_range": r.get("ratio_vs_range"),
                    "create_median_us": float(r.get("create_median_s") or 0) * 1e6})
    return out


H = Headline

EXPERIMENTS = [
    Experiment("iscan", "Fig. 4: nonblocking prefix sum (Iscan + Wait), n doubles per process",
               "iscan_bench", [], mpich=["--sizes", "1,64,4096,262144", "--rounds", "5"],
               quick=["--sizes", "1,512", "--rounds", "1", "--iters", "2"],
               headlines=[H("Fig. 4  Iscan, small (us)", "iscan", ("native",), "range", "1"),
                          H("Fig. 4  Iscan, large (us)", "iscan", ("native",), "range",
                            "262144")]),
    Experiment("create", "Fig. 5: creating a communicator for each half; ping-pong on it",
               "create_bench", [],
               # MPICH busy-polls on an oversubscribed node: fewer samples keep it near a minute.
               mpich=["--reps", "30", "--rounds", "20", "--iters", "500"],
               quick=["--reps", "3", "--batches", "3", "--batch-size", "200", "--sizes", "1,1024",
                      "--rounds", "3", "--iters", "50", "--warmup", "10"],
               headlines=[H("Fig. 5  create a half (us)", "create", ("create_group", "split"),
                            "range"),
                          H("Fig. 5  ping-pong latency (us)", "pingpong", ("native",), "range", "1")]),
    Experiment("cascade", "Fig. 6: overlapping communicators, cascaded and alternating",
               "cascade_bench", [],
               quick=["--reps", "2", "--batches", "2", "--batch", "50"],
               headlines=[H("Fig. 6  cascaded creation (us)", "cascade", ("native_cascaded",),
                            "range_cascaded"),
                          H("Fig. 6  alternating creation (us)", "cascade",
                            ("native_alternating",), "range_alternating")]),
    Experiment("create_bcast", "Fig. 7: create a half, then broadcast on it",
               "coll_bench", ["--experiments", "create"],
               quick=["--experiments", "create", "--rounds", "1"],
               headlines=[H("Fig. 7  create + 1 bcast of 1 int (us)", "create_bcast",
                            ("create_group", "split"), "range", "1x1"),
                          H("Fig. 7  create + 1 bcast of 1024 ints (us)", "create_bcast",
                            ("create_group", "split"), "range", "1024x1"),
                          H("Fig. 7  create + 50 bcasts (us)", "create_bcast",
                            ("create_group", "split"), "range", "1024x50")]),
    Experiment("sort", "Fig. 8: Janus Quicksort on ranges vs native communicators",
               "sort_bench", [], mpich=["--sizes", "1,64,4096,65536", "--reps", "5"],
               quick=["--sizes", "1,256", "--reps", "1", "--warmup", "0"], adapt=sort_rows,
               headlines=[H("Fig. 8  JQuick, n/p = 1 (us)", "sort",
                            ("jquick/create_group", "jquick/split"), "jquick/range", "1"),
                          H("Fig. 8  JQuick, large n/p (us)", "sort",
                            ("jquick/create_group", "jquick/split"), "jquick/range", "65536")]),
    Experiment("latency", "Fig. 9 (blocking here): collective latency on a range vs native",
               "coll_bench", ["--experiments", "latency", "--sizes", "4,64,1024,16384,262144,1048576"],
               mpich=["--experiments", "latency", "--sizes", "4,1024,65536,1048576",
                      "--rounds", "3", "--colls", "bcast,reduce,scan,gather"],
               quick=["--experiments", "latency", "--sizes", "4,4096", "--rounds", "1",
                      "--iters", "2", "--colls", "bcast,scan,gather"],
               headlines=[H("Fig. 9  Bcast (us)", "bcast", ("native",), "range", "1024"),
                          H("Fig. 9  Reduce (us)", "reduce", ("native",), "range", "1024"),
                          H("Fig. 9  Scan (us)", "scan", ("native",), "range", "1024"),
                          H("Fig. 9  Gather (us)", "gather", ("native",), "range", "1024")]),
    Experiment("alive", "Communicators alive before failure; memory per communicator",
               # 65528 collective dups take 10-20 s on Open MPI when the machine is idle, minutes
               # when it is loaded: the time limit keeps the showcase near its budget.
               "limit_bench", ["--time-limit", "90"],
               # MPICH's limit is per process (the error says so): MPI_COMM_SELF shows it in
               # milliseconds, where 2046 dups of the world take minutes on an oversubscribed node.
               mpich=["--time-limit", "90", "--variants", "range_world,range_self,native_self"],
               quick=["--max", "500", "--batch", "100"],
               mpich_quick=["--max", "500", "--batch", "100",
                            "--variants", "range_world,range_self,native_self"],
               headlines=[H("alive: p-member comms (count)", "alive", ("native_world",),
                            "range_world"),
                          H("alive: 1-member comms (count)", "alive", ("native_self",),
                            "range_self"),
                          H("memory per p-member comm (heap B)", "heap", ("native_world",),
                            "range_world"),
                          H("memory per 1-member comm (heap B)", "heap", ("native_self",),
                            "range_self")]),
    Experiment("overlap", "Nonblocking collectives: overlap with computation (NBCBench)",
               "coll_bench", ["--experiments", "overlap"],
               quick=["--experiments", "overlap", "--overlap-bytes", "65536"],
               headlines=[H("overlap Ibcast (%)", "overlap_ibcast", ("native",), "range"),
                          H("overlap Iallreduce (%)", "overlap_iallreduce", ("native",),
                            "range"),
                          H("Ibcast: time added to the computation", "extra_ibcast",
                            ("native",), "range"),
                          H("Iallreduce: time added to the computation", "extra_iallreduce",
                            ("native",), "range")]),
    Experiment("passthrough", "Pass-through cost of librangecomm.so on real communicators",
               "passthrough_bench", ["--runs", "5", "--calls", "5000000", "--rounds", "9"],
               quick=["--runs", "1", "--calls", "100000", "--iters", "1000", "--rounds", "3"],
               launches_mpi=True,
               headlines=[H("pass-through MPI_Comm_rank", "passthrough_comm_rank", ("native",),
                            "preload"),
                          H("pass-through ping-pong 8 B", "passthrough_pingpong", ("native",),
                            "preload")]),
    Experiment("preload", "Unmodified MPI programs natively and under rangecomm-run --mode "
               "accelerate: bisection by split, a private dup per call, create_group of halves",
               "preload_bench", ["--ranks", "2,4,8", "--runs", "3"],
               # MPICH time-slices its busy-polling ranks beyond the 2 cores: 4 ranks at most.
               mpich=["--ranks", "2,3,4", "--runs", "3", "--iters", "10"],
               quick=["--ranks", "2", "--runs", "1", "--iters", "2", "--batches", "2"],
               launches_mpi=True,
               headlines=[H("preload: bisection by split (us)", "preload_bisect", ("native",),
                            "accelerate", "8"),
                          H("preload: MPI_Comm_dup + free (us)", "preload_dup", ("native",),
                            "accelerate", "4"),
                          H("preload: MPI_Comm_create_group + free (us)", "preload_create_group",
                            ("native",), "accelerate", "4")]),
    Experiment("libraries", "Programs on HDF5, FFTW-MPI and PETSc natively and under "
               "rangecomm-run --mode accelerate: files, plans and solvers alive at once",
               # Open MPI has context ids for 10000 files: 2000 show the cost in a minute.
               "library_programs", ["--objects", "2000,4000,2000", "--runs", "3"],
               # MPICH's processes die at about 1020 files natively (ROMIO, out of context ids).
               mpich=["--objects", "10000", "--programs", "hdf5_files", "--runs", "3"],
               quick=["--objects", "20,20,20", "--runs", "1"],
               launches_mpi=True,
               headlines=[H("HDF5 files open at once (count)", "preload_hdf5_files_alive",
                            ("native",), "accelerate"),
                          H("HDF5 file create + write (us)", "preload_hdf5_files",
                            ("native",), "accelerate"),
                          H("FFTW-MPI plans alive (count)", "preload_fftw_plans_alive",
                            ("native",), "accelerate"),
                          H("FFTW-MPI plan made (us)", "preload_fftw_plans", ("native",),
                            "accelerate"),
                          H("PETSc solvers alive (count)", "preload_petsc_solvers_alive",
                            ("native",), "accelerate"),
                          H("PETSc solver made + solved (us)", "preload_petsc_solvers",
                            ("native",), "accelerate")]),
    Experiment("stress", "Stress: 10^7 create/free cycles of a range, heap growth over them",
               "stress_bench", [], quick=["--cycles", "100000", "--native-cycles", "50"],
               headlines=[H("create+free cycle (us)", "stress_cycle", ("native",), "range"),
                          H("heap growth over the cycles (bytes)", "stress_growth", ("native",),
                            "range")]),
]

# Which way is better, by unit: the summary says "faster", "more" or "fewer" accordingly.
LOWER_IS_BETTER = {"us": True, "bytes": True, "ns": True, "count": False, "%": False}
