#!/usr/bin/env bash
# A cluster of hosts on one machine: each host a network namespace with a host name of its own,
# joined to the others through a switch namespace by virtual Ethernet, with private addresses
# that nothing outside these namespaces has (no link to the machine's own namespace, so traffic
# stays between the hosts and each host's loopback). MPI's own remote launchers start ranks on
# them through `tools/hosts.sh agent`, which plays the cluster's ssh: it enters the host's
# network namespace and a host name of its own, drops the caller's environment as a login does,
# and runs the command there.
#
#   tools/hosts.sh up N             make hosts rc-h1..rc-hN (2-8; again: rebuilt), as root
#   tools/hosts.sh down             remove them
#   tools/hosts.sh status           the hosts that exist and their addresses
#   tools/hosts.sh hostfile N [S]   an Open MPI hostfile of N hosts with S slots each (2)
#   tools/hosts.sh on HOST CMD...   run CMD on HOST with the caller's environment (a launcher)
#   tools/hosts.sh agent [-opts] HOST CMD...
#                                   the remote shell for MPI's launchers: Open MPI's
#                                   `--mca plm_rsh_agent`, MPICH's `-launcher ssh
#                                   -launcher-exec tools/hosts-agent` (that link runs this
#                                   command; leading options, as ssh's -x, are dropped)
#
# Each host's /etc/hosts (through `ip netns exec`'s /etc/netns/<host>/hosts) names every host,
# so MPI resolves the names as on a cluster. Hosts are 10.213.0.<i>/24 on a bridge in the
# namespace rc-switch.
set -euo pipefail

prefix=rc-h
switch=rc-switch
net=10.213.0
etc_netns=/etc/netns

die() { echo "hosts.sh: $*" >&2; exit 2; }
hosts_up() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}[0-9]+$" | sort -V || true; }

down() {
  local h
  for h in $(hosts_up); do
    ip netns del "$h"
    rm -rf "${etc_netns:?}/$h"
  done
  if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$switch"; then ip netns del "$switch"; fi
}

up() {
  local n=$1 i h
  [[ $n =~ ^[0-9]+$ ]] && (( n >= 2 && n <= 8 )) || die "up: 2 to 8 hosts, not '$n'"
  (( $(id -u) == 0 )) || die "up: run as root (network namespaces)"
  down
  ip netns add "$switch"
  ip -n "$switch" link add rcbr type bridge
  ip -n "$switch" link set rcbr up
  for (( i = 1; i <= n; ++i )); do
    h=$prefix$i
    ip netns add "$h"
    ip -n "$h" link set lo up
    ip link add eth0 netns "$h" type veth peer name "port$i" netns "$switch"
    ip -n "$switch" link set "port$i" master rcbr
    ip -n "$switch" link set "port$i" up
    ip -n "$h" addr add "$net.$i/24" dev eth0
    ip -n "$h" link set eth0 up
  done
  for (( i = 1; i <= n; ++i )); do
    h=$prefix$i
    mkdir -p "$etc_netns/$h"
    {
      echo "127.0.0.1 localhost"
      for (( j = 1; j <= n; ++j )); do echo "$net.$j $prefix$j"; done
    } >"$etc_netns/$h/hosts"
  done
  status
}

status() {
  local h
  for h in $(hosts_up); do
    printf '%s %s\n' "$h" "$(ip -n "$h" -4 -o addr show dev eth0 | awk '{print $4}')"
  done
}

# Runs "$@" as HOST: its network namespace (and /etc/hosts), and a UTS namespace named after it.
as_host() {
  local h=$1
  shift
  hosts_up | grep -qx "$h" || die "no host $h (tools/hosts.sh up N first)"
  exec ip netns exec "$h" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
}

cmd=${1:-}
shift || true
# Called as hosts-agent (a link to this script: MPICH's -launcher-exec takes a program alone).
[[ $(basename "$0") == hosts-agent ]] && { set -- "$cmd" "$@"; cmd=agent; }
case $cmd in
  up) up "${1:-}" ;;
  down) down ;;
  status) status ;;
  hostfile)
    n=${1:?hostfile N [SLOTS]} slots=${2:-2}
    for (( i = 1; i <= n; ++i )); do echo "$prefix$i slots=$slots"; done
    ;;
  on)
    (( $# >= 2 )) || die "on HOST CMD..."
    as_host "$@"
    ;;
  agent)
    while [[ ${1:-} == -* ]]; do shift; done  # ssh options the launchers add (-x)
    (( $# >= 2 )) || die "agent HOST CMD..."
    h=$1
    shift
    # A login's environment, as ssh gives one; the command line is one string for a shell.
    as_host "$h" env -i HOME="${HOME:-/root}" USER="$(id -un)" LOGNAME="$(id -un)" \
      PATH=/usr/local/bin:/usr/bin:/bin sh -c "$*"
    ;;
  *) sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2 ;;
esac
