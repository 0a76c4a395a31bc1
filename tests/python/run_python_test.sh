#!/bin/sh
# Runs a Python package test with the venv scripts/setup-python.sh makes (.venv-py, the dcs
# package pip-installed into it); exit 77 (CTest: skipped) when that venv is missing.
python="$1"
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python not found; run scripts/setup-python.sh (CI does, via scripts/setup.sh)"
  exit 77
fi
exec "$python" "$(dirname "$0")/run_pytest.py" "$@"
