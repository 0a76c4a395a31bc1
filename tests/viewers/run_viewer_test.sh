#!/bin/sh
# Runs a viewer test with the viewer venv's Python; exit 77 (CTest: skipped) with a clear message
# when the venv is missing. CI always has it: scripts/setup.sh runs scripts/setup-viewers.sh.
python="$1"
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python not found; run scripts/setup-viewers.sh (CI does, via scripts/setup.sh)"
  exit 77
fi
exec "$python" "$@"
