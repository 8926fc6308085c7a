#!/usr/bin/env bash
# A Debian 13 (trixie) root for testing against the newer MPI generation (MPICH 4.2, Open MPI
# 5.0, Catch2 3, GCC 14) on a Debian 12 machine: made with debootstrap from Debian's registry,
# cached between runs on the same machine, remade when missing or incomplete.
#
#   tools/debian13.sh [--root DIR] setup       make the root (if needed) and install the
#                                              project's packages in it (tools/setup.sh)
#   tools/debian13.sh [--root DIR] run CMD...  set up, then run CMD in this repository inside
#                                              the root (same path), as root
#   tools/debian13.sh [--root DIR] remove      unmount and delete the root
#
# The root is $RANGECOMM_DEBIAN13_ROOT, by default /var/cache/rangecomm/debian13; the mirror is
# $RANGECOMM_DEBIAN_MIRROR (http://deb.debian.org/debian). Needs root or sudo (debootstrap,
# mounts, chroot). /proc, /dev, /dev/pts, /dev/shm and /sys and the repository are bind-mounted
# for each run and unmounted after it; runs on one root are serialised by a lock.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

root=${RANGECOMM_DEBIAN13_ROOT:-/var/cache/rangecomm/debian13}
mirror=${RANGECOMM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
if [[ ${1:-} == --root ]]; then root=$2; shift 2; fi
command=${1:-}
shift || true

sudo=()
if (( $(id -u) != 0 )); then
  command -v sudo >/dev/null || { echo "debian13: needs root or sudo (debootstrap, chroot)" >&2; exit 1; }
  sudo=(sudo)
fi
as_root() { "${sudo[@]}" "$@"; }

mounts=(proc dev dev/pts dev/shm sys)

unmount_all() {
  local target
  for target in "$top" "${mounts[@]}"; do
    [[ $target == /* ]] || target=/$target
    if mountpoint -q "$root$target"; then as_root umount -l "$root$target" || true; fi
  done
}

mount_all() {
  as_root mount -t proc proc "$root/proc"
  local d
  for d in dev dev/pts dev/shm sys; do
    as_root mkdir -p "$root/$d"
    as_root mount --bind "/$d" "$root/$d"
  done
  as_root mkdir -p "$root$top"
  as_root mount --bind "$top" "$root$top"
  as_root cp /etc/resolv.conf "$root/etc/resolv.conf"
}

# debootstrap when the root is missing or a previous one did not finish.
make_root() {
  [[ -f $root/.rangecomm-root-complete ]] && return 0
  if ! command -v debootstrap >/dev/null; then
    echo "debian13: installing debootstrap"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  unmount_all
  as_root rm -rf "$root"
  as_root mkdir -p "$root"
  echo "debian13: debootstrap $suite from $mirror into $root"
  local log
  log=$(as_root debootstrap --variant=minbase --include=ca-certificates "$suite" "$root" \
        "$mirror" 2>&1) || { echo "$log" | tail -n 20; echo "debian13: debootstrap failed"; return 1; }
  as_root touch "$root/.rangecomm-root-complete"
}

# The project's packages, installed by its own script (quiet when they are all there).
install_packages() {
  as_root chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    DEBIAN_FRONTEND=noninteractive bash "$top/tools/setup.sh"
}

with_lock() {
  as_root mkdir -p "$(dirname "$root")"
  exec 9>"$root.lock" 2>/dev/null || exec 9>"/tmp/rangecomm-debian13.lock"
  flock 9
}

case $command in
  setup|run)
    with_lock
    make_root
    trap unmount_all EXIT
    unmount_all
    mount_all
    install_packages
    [[ $command == setup ]] && exit 0
    (( $# > 0 )) || { echo "debian13: run needs a command" >&2; exit 2; }
    # A clean environment but for what the tests read: CI, terminal and colour settings.
    as_root chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      CI="${CI:-}" TERM="${TERM:-dumb}" ${NO_COLOR:+NO_COLOR=1} \
      ${RANGECOMM_TESTS_STARTED:+RANGECOMM_TESTS_STARTED=$RANGECOMM_TESTS_STARTED} \
      bash -c 'cd "$0" && exec "$@"' "$top" "$@"
    ;;
  remove)
    with_lock
    unmount_all
    as_root rm -rf "$root"
    ;;
  *)
    sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    [[ $command == -h || $command == --help ]] || exit 2
    ;;
esac
