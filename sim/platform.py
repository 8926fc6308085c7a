#!/usr/bin/env python3
"""Writes the simulated machine: one single-core host per process on one switch.

Usage: platform.py OUT_DIR HOSTS LATENCY BANDWIDTH

OUT_DIR/platform.xml describes HOSTS hosts node-0..node-(HOSTS-1), each linked to the switch with
BANDWIDTH, and no backbone: the switch does not limit (a non-blocking network), and SimGrid's
network solver couples two messages only where they share a host's link (a backbone that every
message crossed coupled them all, and the simulator spent half of its wall time solving them at
256 processes). A message from a process to itself crosses a loopback link that costs
nothing (MPI copies it in memory; without one SimGrid routes it out through the host's link
and back, a whole LATENCY, and so charged it to every message that the simulated build's
matched probe delivers, which it sends to itself, sim/compat/smpi_compat.cpp).
LATENCY is a message's latency from host to host
(SimGrid units, e.g. 0.75us, 5GBps). A message crosses two links, its sender's and its
receiver's, whose latencies SimGrid adds, so each link gets half of LATENCY. OUT_DIR/hosts lists
the hosts for smpirun's -hostfile. Used by sim/meson.build (the tests' machine) and
tools/run-scaling.sh (one per run).
"""
import os
import re
import sys


def half(latency):
    """Half of a SimGrid time with its unit ("0.75us" -> "0.375us")."""
    match = re.fullmatch(r"([0-9.eE+-]+)([a-z]*)", latency)
    if not match:
        sys.exit(f"platform.py: not a SimGrid time: {latency}")
    return f"{float(match.group(1)) / 2:g}{match.group(2)}"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    out, hosts, latency, bandwidth = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    link_latency = half(latency)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "platform.xml"), "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                f'  <cluster id="cluster" prefix="node-" suffix="" radical="0-{hosts - 1}" '
                f'speed="1Gf"\n           bw="{bandwidth}" lat="{link_latency}" '
                'loopback_bw="1000GBps" loopback_lat="0us"/>\n'
                "</platform>\n")
    with open(os.path.join(out, "hosts"), "w") as f:
        f.write("".join(f"node-{i}\n" for i in range(hosts)))


if __name__ == "__main__":
    main()
