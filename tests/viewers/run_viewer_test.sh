#!/bin/sh
# Runs a viewer test with the viewer venv's Python; exit 77 (CTest: skipped) with a clear message
# when the venv is missing. CI always has it: scripts/setup.sh runs scripts/setup-viewers.sh.
# ParaView's pvpython runs under xvfb-run (an X display for rendering, none needed on the host).
python="$1"
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python not found; run scripts/setup-viewers.sh (CI does, via scripts/setup.sh)"
  exit 77
fi
case "$python" in
  *pvpython*)
    if ! command -v xvfb-run >/dev/null; then
      echo "SKIPPED: xvfb-run not found (Debian's xvfb); run scripts/setup-viewers.sh"
      exit 77
    fi
    exec xvfb-run -a "$python" "$@" ;;
esac
exec "$python" "$@"
