"""PNG plots of the showcase's rows: one figure per experiment, one row of panels per MPI.

A panel shows one CSV experiment of a driver: a log-log line per variant when the parameter is
numeric with three or more values (as the paper plots its sweeps), else grouped bars (log scale
when the values span more than a factor of 30). Error bars go from min to max.
"""

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

UNIT_LABEL = {"us": "time [us]", "%": "overlap [%]", "count": "communicators alive",
              "bytes": "bytes per communicator", "ns": "time [ns]"}
XLABEL = {"pingpong": "message bytes", "bcast": "bytes", "reduce": "bytes",
          "allreduce": "bytes", "scan": "bytes", "gather": "bytes per process",
          "allgather": "bytes per process", "alltoall": "bytes", "create": "processes in the half",
          "create_bcast": "ints x broadcasts", "cascade": "group size",
          "iscan": "doubles per process", "sort": "elements per process",
          # limit_bench: communicators over all p ranks, or over the process alone
          "alive/alive": "members", "alive/memory": "members", "alive/heap": "members",
          "alive/create": "members", "preload_bisect": "ranks", "preload_dup": "ranks",
          "preload_create_group": "ranks", "preload_create": "ranks"}
COLUMNS = 4


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def unit_of(rows, experiment):
    unit = rows[0].get("unit")
    return unit or ("%" if experiment.startswith("overlap") else "us")


def line_panel(ax, rows, variants, unit):
    for v in variants:
        pts = sorted((number(r["param"]), r) for r in rows if r["variant"] == v)
        xs = [x for x, _ in pts]
        ys = [r["median_us"] for _, r in pts]
        lo = [r["median_us"] - r["min_us"] for _, r in pts]
        hi = [r["max_us"] - r["median_us"] for _, r in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=v)
    positive = all(r["median_us"] > 0 and r["min_us"] > 0 for r in rows)
    ax.set_xscale("log", base=2)
    if positive and unit != "%":
        ax.set_yscale("log")


def bar_panel(ax, rows, variants, unit):
    params = list(dict.fromkeys(r["param"] for r in rows))
    width = 0.8 / max(1, len(variants))
    for k, v in enumerate(variants):
        xs, ys, lo, hi = [], [], [], []
        for i, p in enumerate(params):
            match = [r for r in rows if r["variant"] == v and r["param"] == p]
            if match:
                r = match[0]
                xs.append(i + (k - (len(variants) - 1) / 2) * width)
                ys.append(r["median_us"])
                lo.append(r["median_us"] - r["min_us"])
                hi.append(r["max_us"] - r["median_us"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=v)
    ax.set_xticks(range(len(params)), params)
    values = [r["median_us"] for r in rows if r["median_us"] > 0]
    if unit != "%" and values and all(r["min_us"] > 0 for r in rows) and \
            max(values) / min(values) > 30:
        ax.set_yscale("log")


def panel(ax, rows, key, experiment, mpi_label):
    unit = unit_of(rows, experiment)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    params = {r["param"] for r in rows}
    numeric = all(number(p) is not None and number(p) > 0 for p in params) and len(params) >= 3
    (line_panel if numeric else bar_panel)(ax, rows, variants, unit)
    ax.set_title("%s, %s" % (experiment, mpi_label), fontsize=9)
    ax.set_ylabel(UNIT_LABEL.get(unit, unit), fontsize=8)
    ax.set_xlabel(XLABEL.get(key + "/" + experiment, XLABEL.get(experiment, "param")), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=6)


def make_plots(results_by_run, folder, mpis):
    """results_by_run: [(experiment, mpi, rows)]; returns the PNG paths written."""
    folder = Path(folder)
    written = []
    for key in dict.fromkeys(exp.key for exp, _, _ in results_by_run):
        runs = [(exp, mpi, rows) for exp, mpi, rows in results_by_run if exp.key == key and rows]
        if not runs:
            continue
        names = list(dict.fromkeys(r["experiment"] for _, _, rows in runs for r in rows))
        cols = min(COLUMNS, len(names))
        rows_per_mpi = math.ceil(len(names) / cols)
        fig, axes = plt.subplots(len(runs) * rows_per_mpi, cols, squeeze=False,
                                 figsize=(max(6.0, 3.6 * cols), 2.9 * len(runs) * rows_per_mpi))
        for a in axes.flat:
            a.set_visible(False)
        for m, (exp, mpi, rows) in enumerate(runs):
            for n, name in enumerate(names):
                sel = [r for r in rows if r["experiment"] == name]
                if not sel:
                    continue
                ax = axes[m * rows_per_mpi + n // cols][n % cols]
                ax.set_visible(True)
                # A panel whose rows come from several rank counts (preload_bench) has them on
                # its x axis.
                ranks = list(dict.fromkeys(str(r.get("ranks", "?")) for r in sel))
                where = ("%s %s ranks" % (mpis[mpi][0], ranks[0]) if len(ranks) == 1
                         else mpis[mpi][0])
                panel(ax, sel, key, name, where)
        fig.suptitle(runs[0][0].title, fontsize=10)
        fig.tight_layout()
        path = folder / ("%s.png" % key)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
