#!/usr/bin/env python3
"""Plots and a summary of tools/run-scaling.sh's CSV.

Usage: scaling_plots.py SCALING_CSV OUT_DIR

Writes OUT_DIR/scaling.md (per experiment and parameter, the simulated microseconds of each
variant at each p, or the count of the driver's *_count rows, and how many times slower or more
the native variants are than the range one) and,
where matplotlib is installed, OUT_DIR/scaling-<experiment>.png (microseconds against p, log-log).
Only rows of the run's main settings (the most frequent latency, bandwidth, poll cost and
computation, eager size) enter the first table and the plots; the other rows get a table per setting.
"""
import collections
import csv
import os
import sys


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def setting(row):
    """The run's settings: latency, bandwidth, poll cost, computation (measured before it was
    a setting), eager bytes (0 before it was one)."""
    return (row["latency"], row["bandwidth"], row["poll_cost"], row.get("computation") or "measured",
            row.get("eager") or "0")


def is_count(row):
    """Rows of the driver's counts (messages, levels) hold a count where others hold seconds."""
    return row["experiment"].endswith("_count")


def table(rows, title):
    """Markdown: one line per (experiment, parameter, p), a column per variant, then ratios."""
    by_key = collections.defaultdict(dict)
    variants = []
    for r in rows:
        key = (r["experiment"], int(r["parameter"]), int(r["p"]))
        by_key[key][r["variant"]] = float(r["seconds"]) * (1 if is_count(r) else 1e6)
        if r["variant"] not in variants:
            variants.append(r["variant"])
    natives = [v for v in variants if v.startswith(("native", "model"))]
    lines = [f"### {title}", "", "Rows whose experiment ends in _count hold counts, not microseconds.", "",
             "| experiment | parameter | p | " + " | ".join(f"{v} (us)" for v in variants) +
             " | " + " | ".join(f"{v} / range" for v in natives) + " |",
             "|---" * (3 + len(variants) + len(natives)) + "|"]
    for key in sorted(by_key):
        cells = by_key[key]
        times = [f"{cells[v]:.2f}" if v in cells else "" for v in variants]
        ratios = [f"{cells[v] / cells['range']:.2f}" if v in cells and cells.get("range") else ""
                  for v in natives]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(times + ratios) + " |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    settings = collections.Counter(setting(r) for r in rows)
    main_setting = settings.most_common(1)[0][0] if settings else None
    main_rows = [r for r in rows if setting(r) == main_setting]
    other_rows = [r for r in rows if r not in main_rows]
    text = ["# Scaling in simulated time", ""]
    if main_setting:
        text.append(f"Latency {main_setting[0]}, bandwidth {main_setting[1]}, "
                    f"failed poll {main_setting[2]} s, computation {main_setting[3]}, "
                    f"eager below {main_setting[4]} bytes.\n")
        text.append(table(main_rows, "Main runs"))
    for other in sorted({setting(r) for r in other_rows}):
        subset = [r for r in other_rows if setting(r) == other]
        text.append(table(subset, f"Latency {other[0]}, bandwidth {other[1]}, "
                                  f"failed poll {other[2]} s, computation {other[3]}, "
                                  f"eager below {other[4]} bytes"))
    with open(os.path.join(out, "scaling.md"), "w") as f:
        f.write("\n".join(text))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("scaling_plots: no matplotlib, tables only")
        return
    series = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in main_rows:
        if is_count(r):
            continue
        name = f"{r['experiment']}-{r['parameter']}"
        series[name][r["variant"]].append((int(r["p"]), float(r["seconds"]) * 1e6))
    for name, variants in series.items():
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for variant, points in sorted(variants.items()):
            points.sort()
            ax.plot([p for p, _ in points], [t for _, t in points], marker="o", label=variant)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("simulated processes")
        ax.set_ylabel("simulated us per operation")
        ax.set_title(name)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"scaling-{name}.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
