#!/usr/bin/env bash
# Gets the original libraries the benchmark drivers can compare against, at the commits
# docs/benchmarks.md was measured with, into DIR (default: rangecomm-baselines beside this
# repository), and prints the Meson options that build them in:
#
#   DIR/KaDiS                          github.com/MichaelAxtmann/KaDiS  (JanusSort)
#   DIR/KaDiS/external/RBC             github.com/MichaelAxtmann/RBC    (range communicators)
#   DIR/KaDiS/external/RBC/external/tlx  github.com/tlx/tlx             (RBC's helpers)
#   DIR/KaDiS/external/ips4o           github.com/SaschaWitt/ips4o      (KaDiS's local sort)
#
#   tools/baselines.sh [DIR]
#   meson setup build-cmp -Dkadis=DIR/KaDiS          (RBC is then DIR/KaDiS/external/RBC)
#
# Nothing of theirs enters this repository; the tests never need them. To use mirrors instead
# of GitHub, redirect the URLs with git's url.<mirror>.insteadOf configuration.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(dirname "$here")/rangecomm-baselines}

# path, URL, commit (KaDiS's own submodule pins, and RBC's for tlx)
checkouts=(
  "KaDiS https://github.com/MichaelAxtmann/KaDiS ac9c5755d325d1d373a188e6fc0733b12205a74d"
  "KaDiS/external/RBC https://github.com/MichaelAxtmann/RBC 2697d4abb8d9aa0d1840e84f3097fdbe00161011"
  "KaDiS/external/RBC/external/tlx https://github.com/tlx/tlx 57c05e5a6cf062f49223f14c7ffac45acab6a193"
  "KaDiS/external/ips4o https://github.com/SaschaWitt/ips4o ee7eeec15ac890e6f8c6b3c3295629268167c063"
)

mkdir -p "$dir"
for entry in "${checkouts[@]}"; do
  read -r path url commit <<<"$entry"
  target=$dir/$path
  if [[ -e $target/.git ]] && [[ $(git -C "$target" rev-parse HEAD) == "$commit" ]]; then
    continue
  fi
  rm -rf "$target"  # an empty submodule folder of the outer checkout, or a stale copy
  echo "baselines: $url at ${commit:0:12} -> $target"
  git clone --quiet --no-checkout "$url" "$target"
  git -C "$target" checkout --quiet "$commit"
done
echo "baselines: ready; configure with -Dkadis=$dir/KaDiS (and -Drbc=$dir/KaDiS/external/RBC)"
