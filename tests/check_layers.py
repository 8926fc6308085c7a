#!/usr/bin/env python3
"""Fail when a file of core/src or shim/src includes a header of a room above its own.

Usage: check_layers.py [SOURCE_ROOT]

core/src and shim/src are each divided into rooms, each allowed to use only itself and the
rooms below it (the orders below; HACKING.md explains each). A call needs a declaration, so
holding the includes to this order keeps every call pointing down. In core the only calls
upward are through the progress engine's registered pollers (engine/progress.hpp), which is the
point of them. In the shim a few are listed in SHIM_UPWARD, each with its reason: the tables of
fake objects at the bottom release what hangs on an entry. Prints file:line: what is wrong for
each include that points up or at a room not in the list; exits 1 if there is one.
"""
import os
import re
import sys

CORE_ROOMS = ["util", "engine", "wire", "comm", "p2p", "sched", "coll", "groups"]
SHIM_ROOMS = ["base", "handles", "requests", "operations", "world", "comms", "accelerate", "entry", "fortran"]

# Includes of the shim that point up, and why they must.
SHIM_UPWARD = {
    # releasing a communicator's entry frees its fallback communicator and its hints
    ("handles/tables.cpp", "comms/fallback.h"),
    ("handles/tables.cpp", "comms/hints.h"),
    # a new request first sweeps the finished detached operations
    ("handles/tables.cpp", "requests/requests.h"),
    # an error handler the shim never saw created is called on the fallback channel
    ("handles/error_dispatch.cpp", "world/roots.h"),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Headers of neither tree's rooms: the public headers, and the shim's generated ones.
OUTSIDE = ("rangecomm/", "rangecomm.h", "real_mpi.h", "shim_hooks.h", "core_redirect.h",
           "fortran_entries.h")


def check_tree(root, tree, rooms, upward, suffixes):
    src = os.path.join(root, tree)
    problems, checked, used = [], 0, set()
    for dirpath, _, names in sorted(os.walk(src)):
        room = os.path.relpath(dirpath, src).split(os.sep)[0]
        for name in sorted(names):
            if not name.endswith(suffixes):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if room not in rooms:
                problems.append("%s: in no room of %s" % (rel, rooms))
                continue
            checked += 1
            mine = os.path.relpath(path, src)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).startswith(OUTSIDE):
                        continue
                    target = m.group(1).split("/")[0]
                    if target not in rooms:
                        problems.append("%s:%d: includes %s, not a room's header (write "
                                        "room/name)" % (rel, number, m.group(1)))
                    elif rooms.index(target) > rooms.index(room):
                        if (mine, m.group(1)) in upward:
                            used.add((mine, m.group(1)))
                        else:
                            problems.append("%s:%d: %s (room %s) uses %s, a room above it"
                                            % (rel, number, rel, room, m.group(1)))
    for stale in sorted(upward - used):
        problems.append("%s: listed as including %s upward, but does not (drop it from the "
                        "list)" % stale)
    return checked, problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    core_n, core_p = check_tree(root, os.path.join("core", "src"), CORE_ROOMS, set(),
                                (".cpp", ".hpp"))
    shim_n, shim_p = check_tree(root, os.path.join("shim", "src"), SHIM_ROOMS, SHIM_UPWARD,
                                (".cpp", ".h"))
    for p in core_p + shim_p:
        print(p)
    print("check_layers: %d files of core/src, %d of shim/src (%d listed upward includes), "
          "%d includes pointing up or astray"
          % (core_n, shim_n, len(SHIM_UPWARD), len(core_p) + len(shim_p)))
    return 1 if core_p or shim_p else 0


if __name__ == "__main__":
    sys.exit(main())
