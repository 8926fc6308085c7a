#!/usr/bin/env python3
"""Fail when a file of core/src includes a header of a room above its own.

Usage: check_layers.py [SOURCE_ROOT]

core/src is divided into rooms, each allowed to use only itself and the rooms below it (the
order below; HACKING.md explains each). A call needs a declaration, so holding the includes to
this order keeps every call pointing down: the only calls upward are through the progress
engine's registered pollers (engine/progress.hpp), which is the point of them. Prints
file:line: what is wrong for each include that points up or at a room not in the list; exits 1
if there is one.
"""
import os
import re
import sys

ROOMS = ["util", "engine", "wire", "comm", "p2p", "sched", "coll", "groups"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    src = os.path.join(root, "core", "src")
    problems, checked = [], 0
    for dirpath, _, names in sorted(os.walk(src)):
        room = os.path.relpath(dirpath, src).split(os.sep)[0]
        for name in sorted(names):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if room not in ROOMS:
                problems.append("%s: in no room of %s" % (rel, ROOMS))
                continue
            checked += 1
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).startswith("rangecomm/"):
                        continue  # the public headers sit below every room
                    target = m.group(1).split("/")[0]
                    if target not in ROOMS:
                        problems.append("%s:%d: includes %s, not a room's header (write "
                                        "room/name.hpp)" % (rel, number, m.group(1)))
                    elif ROOMS.index(target) > ROOMS.index(room):
                        problems.append("%s:%d: %s (room %s) uses %s, a room above it"
                                        % (rel, number, rel, room, m.group(1)))
    for p in problems:
        print(p)
    print("check_layers: %d files of core/src, %d includes pointing up or astray"
          % (checked, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
