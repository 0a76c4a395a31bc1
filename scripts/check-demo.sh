#!/usr/bin/env bash
# CI's check of the README's demo (scripts/run-demo.sh) as a newcomer runs it: it builds the
# demo's binary (no trajectory readers), maps data/2lzt.pqr into out/, and prints its time; then
# the binary must refuse a trajectory and a PSF topology with exit 2, saying how to build them in.
# Usage: scripts/check-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
rm -f out/2lzt.h5 out/2lzt.dx
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash scripts/run-demo.sh >"$log" 2>&1 || { cat "$log"; echo "check-demo: the demo failed" >&2; exit 1; }
for f in out/2lzt.h5 out/2lzt.dx; do
  [[ -s "$f" ]] || { cat "$log"; echo "check-demo: the demo did not write $f" >&2; exit 1; }
done
# The demo's first run is clean: no warning of dcs on its defaults (issue 38: users learn to ignore
# them); the compiler's output above it is not judged here.
if grep -q "^\[dcs\] warning" "$log"; then
  cat "$log"; echo "check-demo: the demo's run printed a warning" >&2; exit 1
fi
dcs=$(sed -n 's/^run-demo: dcs is \([^ ]*\) .*/\1/p' "$log")
[[ -x "$dcs" ]] || { cat "$log"; echo "check-demo: run-demo did not say where dcs is" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$tmp"' EXIT
touch "$tmp/md.dcd" "$tmp/top.psf"
for args in "--topology data/2lzt.pqr --trajectory $tmp/md.dcd" "--topology $tmp/top.psf --trajectory $tmp/md.dcd"; do
  set +e
  # shellcheck disable=SC2086
  "$dcs" $args -o "$tmp/m.h5" >"$tmp/out" 2>&1
  code=$?
  set -e
  if [[ $code -ne 2 ]] || ! grep -q "scripts/setup-build.sh" "$tmp/out"; then
    cat "$tmp/out"; echo "check-demo: '$args' gave exit $code, expected 2 naming scripts/setup-build.sh" >&2; exit 1
  fi
done
[[ ! -e "$tmp/m.h5" && ! -e "$tmp/m.h5.partial" ]] || { echo "check-demo: a refused run left a file" >&2; exit 1; }
echo "check-demo: the demo passed in $((SECONDS - start)) s ($dcs)" >&2
