#!/usr/bin/python3
"""The rangecomm showcase: every experiment against native MPI, with a summary, plots and raw rows.

Runs each benchmark driver of tools/showcase_experiments.py on Open MPI (8 ranks) and MPICH
(4 ranks), shows which run is going and how far it is, and writes everything into one results
folder: raw CSV per run, all rows as CSV and JSON, the summary table, PNG plots and the drivers'
logs. Drivers that do not exist yet are skipped with a line saying so. Expects the build
directories to be built (tools/run-showcase.sh builds them).
"""

import argparse
import csv
import datetime
import io
import json
import math
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from showcase_experiments import EXPERIMENTS, LOWER_IS_BETTER  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MPIS = {
    # name: (label, launcher, default ranks)
    "openmpi": ("Open MPI", ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none"], 8),
    "mpich": ("MPICH", ["mpiexec.mpich", "-launcher", "fork"], 4),
}


def parse_args():
    p = argparse.ArgumentParser(
        description="Run the rangecomm experiments (paper 001 Figs. 4-9 and extras) against "
                    "native MPI on Open MPI and MPICH; write a summary, plots and raw rows.")
    p.add_argument("--quick", action="store_true",
                   help="tiny parameters: a smoke run of every driver in well under a minute")
    p.add_argument("--mpi", choices=["both", "openmpi", "mpich"], default="both")
    p.add_argument("--only", metavar="KEYS",
                   help="comma-separated experiment keys (%s)" % ",".join(e.key for e in EXPERIMENTS))
    p.add_argument("--build-openmpi", default=str(REPO / "build-openmpi"), metavar="DIR")
    p.add_argument("--build-mpich", default=str(REPO / "build-mpich"), metavar="DIR")
    p.add_argument("--ranks-openmpi", type=int, default=MPIS["openmpi"][2], metavar="N")
    p.add_argument("--ranks-mpich", type=int, default=MPIS["mpich"][2], metavar="N")
    p.add_argument("--results", metavar="DIR",
                   help="results folder (default results/<date>-<time> in the repository)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="seconds before a run is stopped (default 420, 60 with --quick)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    return p.parse_args()


def driver_source_exists(driver):
    return any((REPO / "bench" / (driver + ext)).exists() for ext in (".cpp", ".c", ".cc"))


def plan_runs(args):
    """(experiment, mpi) pairs in the order they run: all of Open MPI, then all of MPICH."""
    keys = set(args.only.split(",")) if args.only else None
    if keys:
        unknown = keys - {e.key for e in EXPERIMENTS}
        if unknown:
            sys.exit("showcase: unknown experiment(s) %s" % ",".join(sorted(unknown)))
    mpis = ["openmpi", "mpich"] if args.mpi == "both" else [args.mpi]
    return [(e, m) for m in mpis for e in EXPERIMENTS if keys is None or e.key in keys]


def command_for(exp, mpi, args):
    build = Path(getattr(args, "build_" + mpi))
    ranks = getattr(args, "ranks_" + mpi)
    launcher = list(MPIS[mpi][1])
    if mpi == "openmpi" and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    if args.quick:
        extra = exp.mpich_quick if (mpi == "mpich" and exp.mpich_quick is not None) else exp.quick
    else:
        extra = exp.mpich if (mpi == "mpich" and exp.mpich is not None) else exp.args
    exe = build / "bench" / exp.driver
    if exp.launches_mpi:  # the driver starts its own MPI runs, given the launcher
        return exe, ([str(exe)] + list(extra) + ["--format", "csv", "--compare",
                     str(build / "shim" / "librangecomm.so"), "--"] + launcher)
    return exe, launcher + ["-n", str(ranks), str(exe)] + list(extra) + ["--format", "csv"]


class Progress:
    """The status of the current run: one line rewritten in place on a terminal."""

    def __init__(self):
        self.tty = sys.stdout.isatty()
        self.lock = threading.Lock()
        self.prefix = ""
        self.start = time.time()
        self.last = ""

    def begin(self, prefix):
        self.prefix, self.start, self.last = prefix, time.time(), ""
        self.show()

    def note(self, line):
        self.last = line.strip()[:60]
        self.show()

    def show(self):
        if not self.tty:
            return
        with self.lock:
            text = "%s  %5.1f s  %s" % (self.prefix, time.time() - self.start, self.last)
            sys.stdout.write("\r\033[K" + text[:150])
            sys.stdout.flush()

    def end(self, outcome):
        with self.lock:
            if self.tty:
                sys.stdout.write("\r\033[K")
            print("%s  %s" % (self.prefix, outcome), flush=True)


def run_one(cmd, env, timeout, log_path, progress):
    """Runs cmd; returns (exit status or None on timeout, stdout text, seconds)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True, cwd=REPO)
    out_chunks = []
    with open(log_path, "w") as log:
        log.write("$ %s\n" % " ".join(cmd))

        def pump_stderr():
            for line in proc.stderr:
                log.write(line)
                progress.note(line)

        reader = threading.Thread(target=pump_stderr, daemon=True)
        reader.start()
        stdout_reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()),
                                         daemon=True)
        stdout_reader.start()
        status = None
        while time.time() - t0 < timeout:
            try:
                status = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                progress.show()
        if status is None:  # stop the launcher and every rank it started
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    continue
        stdout_reader.join(timeout=5)
        reader.join(timeout=5)
        stdout = "".join(out_chunks)
        log.write("\n--- stdout\n" + stdout)
    return status, stdout, time.time() - t0


def csv_start(lines):
    """Index of the CSV header: the first line naming a median column, or None."""
    return next((i for i, l in enumerate(lines) if l.count(",") >= 3 and "median" in l), None)


def parse_rows(stdout, adapt=None):
    """The driver's CSV rows in the common layout, numbers as floats."""
    lines = stdout.splitlines()
    start = csv_start(lines)
    if start is None:
        return []
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    rows = [r for r in rows if None not in r.values()]  # cut-off lines of a killed run
    if adapt:
        rows = adapt(rows)
    for row in rows:
        for k in ("median_us", "min_us", "max_us", "ratio_vs_native"):
            if k not in row:
                continue
            try:
                row[k] = float(row[k])
            except (TypeError, ValueError):
                pass
    return [r for r in rows if isinstance(r.get("median_us"), float)]


def machine_facts():
    def cmd(*c):
        try:
            return subprocess.run(c, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    model = next((l.split(":", 1)[1].strip() for l in cmd("lscpu").splitlines()
                  if l.startswith("Model name")), platform.processor())
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host_cpus": os.cpu_count(),
        "cpu_model": model,
        "load_before": os.getloadavg(),
        "kernel": platform.release(),
        "commit": cmd("git", "-C", str(REPO), "rev-parse", "--short", "HEAD"),
        "tree_modified": bool(cmd("git", "-C", str(REPO), "status", "--porcelain", "--", "core",
                                  "bench", "shim", "sort")),
        "openmpi": cmd("mpiexec.openmpi", "--version").splitlines()[:1],
        "mpich": [l for l in cmd("mpiexec.mpich", "--version").splitlines() if "Version" in l][:1],
    }


# ---------------------------------------------------------------------------------------------
# Summary

def row_unit(row, experiment):
    if row.get("unit"):
        return row["unit"]
    return "%" if experiment.startswith("overlap") else "us"


def auto_headlines(exp, rows):
    """Without listed headlines: each CSV experiment, native* (or ratio 1) against range*."""
    from showcase_experiments import Headline
    out = []
    for name in dict.fromkeys(r["experiment"] for r in rows):
        variants = list(dict.fromkeys(r["variant"] for r in rows if r["experiment"] == name))
        native = [v for v in variants if v.startswith("native")] or \
                 [r["variant"] for r in rows if r["experiment"] == name
                  and r.get("ratio_vs_native") == 1.0][:1]
        rng = [v for v in variants if v.startswith("range") or "rangecomm" in v]
        if native and rng:
            out.append(Headline("%s: %s" % (exp.key, name), name, (native[0],), rng[0]))
    return out


def times(q):
    """A factor as a reader wants it: 4150x, 92.8x, 1.05x."""
    return "%.0fx" % q if q >= 100 else "%.3gx" % q


def reading(native, rng, unit, capped, native_capped=False, native_timed_out=False):
    if unit == "%":
        return "%+.0f points" % (rng - native)
    if not native or not rng:
        return "-"
    if LOWER_IS_BETTER.get(unit, True):
        words = ("faster", "slower") if unit in ("us", "ns") else ("less", "more")
        return ("%s %s" % (times(native / rng), words[0]) if rng <= native
                else "%s %s" % (times(rng / native), words[1]))
    if capped and native_capped:
        return "both stopped at --max"
    if native_timed_out:
        return "native stopped by --time-limit before its limit"
    text = ("%s more" % times(rng / native)) if rng >= native else ("%s fewer" % times(native / rng))
    return text + (" (range stopped at --max)" if capped else "")


def summarize(exp, mpi, ranks, rows):
    entries = []
    for h in exp.headlines or auto_headlines(exp, rows):
        sel = [r for r in rows if r["experiment"] == h.experiment]
        # Parameters at which both sides were measured.
        params = [p for p in dict.fromkeys(r["param"] for r in sel)
                  if {r["variant"] for r in sel if r["param"] == p} >= {h.range}
                  and any(r["variant"] in h.native for r in sel if r["param"] == p)]
        if not params:
            continue
        param = h.param if h.param in params else params[len(params) // 2]
        at = [r for r in sel if r["param"] == param]
        nat = sorted((r for r in at if r["variant"] in h.native), key=lambda r: r["median_us"])
        rng = [r for r in at if r["variant"] == h.range]
        if not nat or not rng:
            continue
        native, value = nat[0]["median_us"], rng[0]["median_us"]
        unit = h.unit or row_unit(rng[0], h.experiment)
        capped = "stopped at --max" in (rng[0].get("note") or "")
        native_capped = "stopped at --max" in (nat[0].get("note") or "")
        native_timed_out = "--time-limit" in (nat[0].get("note") or "")
        # A driver that runs its own jobs (preload_bench) measures at several rank counts: the
        # row says which.
        row_ranks = int(float(rng[0].get("ranks") or ranks))
        entries.append({
            "label": h.label, "param": param, "mpi": "%s %d" % (MPIS[mpi][0], row_ranks),
            "native_variant": "/".join(h.native), "range_variant": h.range,
            "native": native, "range": value, "unit": unit,
            "ratio": value / native if native else None,
            "reading": reading(native, value, unit, capped, native_capped, native_timed_out),
        })
    return entries


def fmt(v):
    """Plain decimals, four significant digits: 26610, 537.8, 0.1295."""
    if v is None:
        return "-"
    if v == 0 or abs(v) >= 1000 or (v == int(v) and abs(v) >= 10):
        return "%.0f" % v
    digits = max(0, 3 - int(math.floor(math.log10(abs(v)))))
    return "%.*f" % (digits, v)


def table_lines(entries, markdown=False):
    head = ["experiment", "param", "MPI, ranks", "native", "rangecomm", "rangecomm vs native"]
    rows = [[e["label"], e["param"], e["mpi"], fmt(e["native"]), fmt(e["range"]), e["reading"]]
            for e in entries]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return lines + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) if i in (0, 2, 5) else str(x).rjust(w)
                               for i, (x, w) in enumerate(zip(r, widths))).rstrip()
    return [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]


# ---------------------------------------------------------------------------------------------
# Main

def write_rows(folder, all_rows):
    fields = list(dict.fromkeys(["mpi", "run", "driver"] + [k for r in all_rows for k in r]))
    with open(folder / "rows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(all_rows)
    with open(folder / "rows.json", "w") as f:
        json.dump(all_rows, f, indent=1)


def main():
    args = parse_args()
    if args.list:
        for e in EXPERIMENTS:
            state = "" if driver_source_exists(e.driver) else "   (bench/%s.* not there yet)" % e.driver
            print("%-13s %-18s %s%s" % (e.key, e.driver, e.title, state))
        return 0
    timeout = args.timeout or (60 if args.quick else 420)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(args.results) if args.results else REPO / "results" / stamp
    for sub in ("raw", "logs", "plots"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    runs = plan_runs(args)
    meta = machine_facts()
    meta.update(quick=args.quick, runs=[])
    print("rangecomm showcase%s: %d runs on %s; load average %.1f on %d cores"
          % (" (quick)" if args.quick else "", len(runs),
             " and ".join(MPIS[m][0] for m in dict.fromkeys(m for _, m in runs)),
             meta["load_before"][0], meta["host_cpus"]), flush=True)
    progress = Progress()
    all_rows, entries, failures, t_start = [], [], 0, time.time()
    results_by_run = []
    for i, (exp, mpi) in enumerate(runs, 1):
        # A driver that launches its own runs uses two ranks (ping-pong), whatever --ranks says.
        ranks = 2 if exp.launches_mpi else getattr(args, "ranks_" + mpi)
        prefix = "[%d/%d] %s: %s, %s %d ranks" % (i, len(runs), exp.key, exp.driver,
                                                 MPIS[mpi][0], ranks)
        exe, cmd = command_for(exp, mpi, args)
        record = {"key": exp.key, "mpi": mpi, "ranks": ranks, "command": " ".join(cmd)}
        meta["runs"].append(record)
        if not exe.exists():
            why = ("bench/%s.* does not exist yet" % exp.driver if not driver_source_exists(exp.driver)
                   else "%s was not built (run tools/run-showcase.sh, or add it to "
                        "bench/meson.build)" % exe)
            record["status"] = "skipped: " + why
            print("%s  skipped: %s" % (prefix, why), flush=True)
            continue
        progress.begin(prefix)
        log = folder / "logs" / ("%s-%s.log" % (exp.key, mpi))
        status, stdout, secs = run_one(cmd, env, timeout, log, progress)
        rows = parse_rows(stdout, exp.adapt)
        record.update(seconds=round(secs, 1), exit_status=status, rows=len(rows))
        if status is None or status != 0 or not rows:
            failures += 1
            why = ("timed out after %.0f s" % secs if status is None
                   else "exit status %s" % status if status != 0 else "no CSV rows")
            record["status"] = "failed: " + why
            progress.end("FAILED: %s; see %s" % (why, log))
            continue
        record["status"] = "ok"
        progress.end("done in %.1f s, %d rows" % (secs, len(rows)))
        for r in rows:
            r.update(mpi=mpi, run=exp.key, driver=exp.driver)
        with open(folder / "raw" / ("%s-%s.csv" % (exp.key, mpi)), "w") as f:
            lines = stdout.splitlines()
            f.write("\n".join(lines[csv_start(lines):]) + "\n")
        all_rows += rows
        results_by_run.append((exp, mpi, rows))
        entries += summarize(exp, mpi, ranks, rows)

    meta["seconds"] = round(time.time() - t_start, 1)
    meta["load_after"] = os.getloadavg()
    write_rows(folder, all_rows)
    # Group the table by experiment, MPIs next to each other.
    order = list(dict.fromkeys(e["label"] for e in entries))
    entries.sort(key=lambda e: order.index(e["label"]))
    with open(folder / "summary.json", "w") as f:
        json.dump(entries, f, indent=1)
    with open(folder / "summary.md", "w") as f:
        f.write("\n".join(table_lines(entries, markdown=True)) + "\n")
    text = table_lines(entries)
    with open(folder / "summary.txt", "w") as f:
        f.write("\n".join(text) + "\n")

    plots = []
    if not args.no_plots:
        try:
            import showcase_plots
            plots = showcase_plots.make_plots(results_by_run, folder / "plots", MPIS)
        except ImportError as e:
            print("showcase: no plots (%s; tools/setup.sh installs python3-matplotlib)" % e)
    meta["plots"] = [p.name for p in plots]
    with open(folder / "meta.json", "w") as f:
        json.dump(meta, f, indent=1, default=str)

    print()
    print("\n".join(text))
    print("\nnative = the MPI library's own communicator; rangecomm = a range communicator;"
          " medians over repetitions (min/max in rows.csv).")
    print("%d runs in %.0f s, %d failed; %d plots. Results: %s"
          % (len(runs), meta["seconds"], failures, len(plots), folder))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
