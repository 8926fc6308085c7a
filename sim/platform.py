#!/usr/bin/env python3
"""Writes the simulated machine: one single-core host per process on one switch.

Usage: platform.py OUT_DIR HOSTS LATENCY BANDWIDTH

OUT_DIR/platform.xml describes HOSTS hosts node-0..node-(HOSTS-1), each linked to the switch with
LATENCY and BANDWIDTH (SimGrid units, e.g. 0.75us, 5GBps) and a backbone that does not limit;
OUT_DIR/hosts lists them for smpirun's -hostfile. Used by sim/meson.build (the tests' machine)
and tools/run-scaling.sh (one per run).
"""
import os
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    out, hosts, latency, bandwidth = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "platform.xml"), "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                f'  <cluster id="cluster" prefix="node-" suffix="" radical="0-{hosts - 1}" '
                f'speed="1Gf"\n           bw="{bandwidth}" lat="{latency}" '
                'bb_bw="1000GBps" bb_lat="0us"/>\n'
                "</platform>\n")
    with open(os.path.join(out, "hosts"), "w") as f:
        f.write("".join(f"node-{i}\n" for i in range(hosts)))


if __name__ == "__main__":
    main()
