#!/usr/bin/env python3
"""Checks the command line of every benchmark driver (run by meson test, suite bench).

  check_cli.py BUILD_BENCH_DIR

Each C++ driver must answer --help with its options and exit status 0, refuse an unknown
option and a bad value with one line on standard error and exit status 1, and (for the ones
cheap enough to run here, as a single process) print valid JSON rows with --format json.
"""
import json
import os
import subprocess
import sys

DRIVERS = ['create_bench', 'coll_bench', 'limit_bench', 'stress_bench', 'sort_bench',
           'cascade_bench', 'iscan_bench', 'group_bench']
# A quick run of each that can run on one process, and the option it should reject a value of.
QUICK = {
    'coll_bench': ['--sizes', '4', '--rounds', '1', '--experiments', 'latency', '--colls',
                   'bcast,allreduce'],
    'stress_bench': ['--cycles', '1000', '--native-cycles', '10'],
    'iscan_bench': ['--sizes', '1,8', '--rounds', '1', '--iters', '2'],
    'limit_bench': ['--max', '200', '--batch', '50', '--variants', 'range_self,native_self'],
    'sort_bench': ['--sizes', '4', '--reps', '1', '--warmup', '0', '--algorithms',
                   'jquick/range,samplesort/native'],
}
BAD_VALUE = {'create_bench': '--reps', 'coll_bench': '--rounds', 'limit_bench': '--max',
             'stress_bench': '--cycles', 'sort_bench': '--reps', 'cascade_bench': '--batch',
             'iscan_bench': '--rounds', 'group_bench': '--reps'}


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def main():
    bench = sys.argv[1]
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    for name in DRIVERS:
        exe = os.path.join(bench, name)
        r = run([exe, '--help'])
        expect(r.returncode == 0 and '--format' in r.stdout and '--help' in r.stdout,
               f'{name} --help: exit {r.returncode}, options missing from the text')
        r = run([exe, '--no-such-option'])
        expect(r.returncode == 1 and '--no-such-option' in r.stderr,
               f'{name} --no-such-option: exit {r.returncode}, stderr {r.stderr.strip()!r}')
        r = run([exe, BAD_VALUE[name], 'zero'])
        expect(r.returncode == 1 and BAD_VALUE[name] in r.stderr,
               f'{name} {BAD_VALUE[name]} zero: exit {r.returncode}, stderr {r.stderr.strip()!r}')
        r = run([exe, '--format', 'xml'])
        expect(r.returncode == 1, f'{name} --format xml: exit {r.returncode}')
        if name not in QUICK:
            continue
        r = run([exe, *QUICK[name], '--format', 'json'])
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError as e:
            expect(False, f'{name} --format json: not JSON ({e}): {r.stdout[:200]!r}')
            continue
        rows = doc.get('rows', [])
        expect(r.returncode == 0 and doc.get('driver') == name and len(rows) > 0,
               f'{name} --format json: exit {r.returncode}, driver {doc.get("driver")}, '
               f'{len(rows)} rows')
        for row in rows:
            number = 'median' if 'median' in row else 'median_s'
            expect(isinstance(row.get(number), (int, float)) and row[number] >= 0,
                   f'{name}: row without a numeric {number}: {row}')
        print(f'{name}: --help, bad options and {len(rows)} JSON rows ok')
    for f in failures:
        print('FAILED:', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
