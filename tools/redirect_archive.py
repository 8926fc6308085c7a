#!/usr/bin/env python3
"""Copies a static library (thin or not) with symbols renamed by objcopy --redefine-syms.

The shim links core through this: core's MPI_X/PMPI_X references become rc_core_MPI_X, which
go to the real MPI library (docs/shim-design.md). objcopy cannot copy the thin archives meson
makes, so each member is renamed on its own and a normal archive is written.

Usage: redirect_archive.py OBJCOPY AR SYMS IN.a OUT.a
"""

import os
import subprocess
import sys
import tempfile


def members(ar, archive):
    names = subprocess.run([ar, 't', archive], check=True, capture_output=True,
                           text=True).stdout.split()
    with open(archive, 'rb') as f:
        thin = f.read(8) == b'!<thin>\n'
    if not thin:
        return None, names
    here = os.path.dirname(archive)
    return [n if os.path.exists(n) else os.path.join(here, n) for n in names], names


def main():
    objcopy, ar, syms, archive, out = sys.argv[1:6]
    paths, names = members(ar, archive)
    with tempfile.TemporaryDirectory() as tmp:
        if paths is None:  # a normal archive: extract the members first
            subprocess.run([ar, 'x', os.path.abspath(archive)], cwd=tmp, check=True)
            paths = [os.path.join(tmp, n) for n in names]
        renamed = []
        for i, path in enumerate(paths):
            target = os.path.join(tmp, '{:03d}_{}'.format(i, os.path.basename(path)))
            subprocess.run([objcopy, '--redefine-syms=' + syms, path, target], check=True)
            renamed.append(target)
        if os.path.exists(out):
            os.remove(out)
        subprocess.run([ar, 'rcs', out] + renamed, check=True)


if __name__ == '__main__':
    main()
