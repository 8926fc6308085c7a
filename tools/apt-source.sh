#!/usr/bin/env bash
# Fetches and unpacks a Debian source package into a folder, with a private deb-src list, apt
# state and cache under that folder's parent: the machine's apt configuration stays as it is.
#
#   tools/apt-source.sh PACKAGE=VERSION DEST
#
# DEST is replaced by the unpacked tree. The mirrors are those of this machine's release
# (RANGECOMM_APT_MIRROR, RANGECOMM_APT_SECURITY_MIRROR override them). Needs dpkg-source
# (dpkg-dev, which tools/setup.sh installs).
set -euo pipefail
(( $# == 2 )) || { sed -n '2,10s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 2; }
package=$1
dest=$2
name=${package%%=*}

command -v dpkg-source >/dev/null ||
  { echo "apt-source: apt-get source needs dpkg-source (dpkg-dev; tools/setup.sh installs it)"; exit 1; }
mkdir -p "$(dirname "$dest")"
parent=$(cd "$(dirname "$dest")" && pwd)
apt=$parent/apt
download=$parent/download-$name
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=${RANGECOMM_APT_MIRROR:-http://deb.debian.org/debian}
security=${RANGECOMM_APT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
cat >"$apt/sources.list" <<EOF
deb-src $mirror $codename main
deb-src $mirror $codename-updates main
deb-src $security $codename-security main
EOF
options=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
         -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)")

start=$SECONDS
log=$(apt-get "${options[@]}" -q update 2>&1) ||
  { echo "$log" | tail -n 20; echo "apt-source: apt-get update failed"; exit 1; }
rm -rf "$download"
mkdir -p "$download"
log=$(cd "$download" && apt-get "${options[@]}" -q source "$package" 2>&1) ||
  { echo "$log" | tail -n 20; echo "apt-source: apt-get source $package failed"; exit 1; }
unpacked=$(find "$download" -mindepth 1 -maxdepth 1 -type d -name "$name-*" | head -n 1)
[[ -n $unpacked ]] || { echo "apt-source: $package unpacked nothing"; exit 1; }
rm -rf "$dest"
mv "$unpacked" "$dest"
rm -rf "$download"
echo "apt-source: fetched $package in $((SECONDS - start)) s"
