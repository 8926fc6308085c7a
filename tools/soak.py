#!/usr/bin/env python3
"""Runs every multi-rank and threaded test of one or more builds many times in a row, and lists
each run that failed (a hang is a failure: the test's own watchdog prints every rank's stacks
before meson's time limit) with the end of its output. Not part of the gating test command
(docs/reliability.md has the last figures).

  tools/soak.py BUILD_DIR... [--runs N] [--threaded-runs N] [--match REGEX] [--minutes M]
                [--output-lines L]

A test is multi-rank when its name ends in -npN with N >= 2 and threaded when it is in the
suite `threads` (whatever its rank count). Defaults: 50 runs of each multi-rank test, 200 of
each threaded one, all tests; --match keeps the tests whose name matches REGEX (re.search);
--minutes stops starting tests after M minutes (0: no limit). Each test's runs are one
`meson test --repeat` call, so its build must be current (--no-rebuild). Prints a line per
test, "<passed>/<runs> <test>", then the failed runs' output, and last "N passed, N failed"
over all runs; the exit status is nonzero when a run failed.
"""
import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path


def selected_tests(build, pattern):
    out = subprocess.run(['meson', 'introspect', '--tests', str(build)], check=True,
                         capture_output=True, text=True).stdout
    for test in json.loads(out):
        m = re.search(r'-np(\d+)$', test['name'])
        threaded = 'threads' in test['suite']
        if not (threaded or (m and int(m.group(1)) >= 2)):
            continue
        if pattern and not re.search(pattern, test['name']):
            continue
        yield test['name'], threaded


def soak_one(build, name, runs, output_lines):
    """Runs one test `runs` times; returns (passed, failed, [failure reports])."""
    logbase = 'soak-' + re.sub(r'[^A-Za-z0-9_.-]', '_', name)
    cmd = ['meson', 'test', '-C', str(build), '--no-rebuild', '--repeat', str(runs),
           '--logbase', logbase, name]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = Path(build) / 'meson-logs' / (logbase + '.json')
    passed = failed = 0
    reports = []
    if not log.exists():
        return 0, runs, [f'{name}: meson wrote no log ({log})']
    for i, line in enumerate(log.read_text().splitlines()):
        result = json.loads(line)
        if result.get('result') in ('OK', 'EXPECTEDFAIL', 'SKIP'):
            passed += 1
            continue
        failed += 1
        text = (result.get('stdout') or '') + (result.get('stderr') or '')
        tail = '\n'.join(text.splitlines()[-output_lines:])
        reports.append(f'--- {name}, run {i + 1}: {result.get("result")} after '
                       f'{result.get("duration", 0):.1f} s\n{tail}')
    if passed + failed < runs:  # runs that never reported (meson itself stopped)
        failed += runs - passed - failed
        reports.append(f'--- {name}: only {passed + failed} of {runs} runs reported')
    return passed, failed, reports


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('builds', nargs='+', type=Path)
    ap.add_argument('--runs', type=int, default=50)
    ap.add_argument('--threaded-runs', type=int, default=200)
    ap.add_argument('--match', default='')
    ap.add_argument('--minutes', type=float, default=0)
    ap.add_argument('--output-lines', type=int, default=60)
    args = ap.parse_args()

    start = time.monotonic()
    total_passed = total_failed = 0
    reports = []
    stopped = []
    for build in args.builds:
        for name, threaded in selected_tests(build, args.match):
            if args.minutes and time.monotonic() - start > args.minutes * 60:
                stopped.append(f'{build}: {name}')
                continue
            runs = args.threaded_runs if threaded else args.runs
            t0 = time.monotonic()
            passed, failed, rep = soak_one(build, name, runs, args.output_lines)
            total_passed += passed
            total_failed += failed
            reports += rep
            print(f'{passed}/{runs} {build.name}: {name} ({time.monotonic() - t0:.0f} s)',
                  flush=True)
    for r in reports:
        print(r)
    if stopped:
        print(f'not run (--minutes {args.minutes:g} spent): {len(stopped)} tests')
        for s in stopped:
            print('  ' + s)
    print(f'{total_passed} passed, {total_failed} failed')
    return 1 if total_failed else 0


if __name__ == '__main__':
    sys.exit(main())
