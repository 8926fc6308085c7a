#!/usr/bin/env python3
"""Fail when a tracked C or C++ source differs from what clang-format makes of it.

Usage: check_format.py [SOURCE_ROOT]

The style is the repository's .clang-format. Formatting differs between clang-format releases,
so the check runs with the release the style was fixed with (REFERENCE_MAJOR, Debian 12's) and
is skipped (exit 77) with any other, or without clang-format. Prints each file that differs and
the command that formats it; exits 1 if there is one.
"""
import os
import re
import shutil
import subprocess
import sys

REFERENCE_MAJOR = 14
SUFFIXES = (".c", ".h", ".cpp", ".hpp")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    tool = shutil.which("clang-format-%d" % REFERENCE_MAJOR) or shutil.which("clang-format")
    if tool is None:
        print("check_format: no clang-format; tools/setup.sh installs it")
        return 77
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    major = re.search(r"version (\d+)", version)
    if major is None or int(major.group(1)) != REFERENCE_MAJOR:
        print("check_format: %s is not clang-format %d, whose output the style is fixed to"
              % (version.strip(), REFERENCE_MAJOR))
        return 77
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                            check=True).stdout.decode().split("\0")
    sources = [f for f in listed if f.endswith(SUFFIXES)]
    differing = []
    for start in range(0, len(sources), 200):
        batch = sources[start:start + 200]
        run = subprocess.run([tool, "--dry-run", "--Werror", "--style=file"] + batch, cwd=root,
                             capture_output=True, text=True)
        if run.returncode != 0:
            differing += sorted({line.split(":")[0] for line in run.stderr.splitlines()
                                 if ": error:" in line})
    for f in differing:
        print("%s: not formatted (clang-format -i %s)" % (f, f))
    print("check_format: %d of %d sources formatted" % (len(sources) - len(differing),
                                                        len(sources)))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
