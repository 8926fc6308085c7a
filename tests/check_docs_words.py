#!/usr/bin/env python3
"""Fail when docs or sources cite internal issue numbers or working-period names.

Usage: check_docs_words.py [SOURCE_ROOT]

Documentation and comments should say why, in the present state, instead of pointing at a
numbered ticket or at the working period in which something was measured. Scans the git-tracked
files under the directories below (this file excepted) and prints file:line: text for every
hit; exits 1 if there is one, 0 otherwise.
"""
import os
import re
import subprocess
import sys

DIRS = ["docs", "core", "shim", "sort", "bench", "tools", "tests"]
SKIP_SUFFIXES = (".png", ".jpg", ".gif", ".pdf", ".gz", ".so", ".a", ".o")

ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
            "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
            "twentieth").split()
# The words are assembled at run time so that this file does not match its own patterns.
SESSION = "sess" + "ion"
ISSUE = "iss" + "ue"
PATTERNS = [
    re.compile(r"\b" + ISSUE + r"s?\s+#?\d+", re.IGNORECASE),
    re.compile(r"\b(" + "|".join(ORDINALS) + r"|\d+(st|nd|rd|th))[\s-]+" + SESSION + r"s?\b",
               re.IGNORECASE),
    re.compile(r"\b" + SESSION + r"\s+#?\d+\b", re.IGNORECASE),
]


def tracked_files(root):
    """The git-tracked files under DIRS; every file under them outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--"] + DIRS,
                             check=True, capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # no git, or an exported tree
        files = []
        for d in DIRS:
            for dirpath, _, names in os.walk(os.path.join(root, d)):
                files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
        return sorted(files)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    hits = 0
    me = os.path.realpath(__file__)
    for rel in tracked_files(root):
        if rel.endswith(SKIP_SUFFIXES) or os.path.realpath(os.path.join(root, rel)) == me:
            continue
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except (FileNotFoundError, IsADirectoryError):
            continue  # deleted in the work tree, or a submodule
        for number, line in enumerate(lines, 1):
            if any(p.search(line) for p in PATTERNS):
                print(f"{rel}:{number}: {line.strip()}")
                hits += 1
    if hits:
        print(f"check_docs_words: {hits} line(s) cite an internal issue number or a working "
              "period; say why in the present state instead", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
