#!/bin/sh
# Runs a viewer test with the viewer venv's Python; exit 77 (CTest: skipped) with a clear message
# when the venv is missing. CI always has it: scripts/setup.sh runs scripts/setup-viewers.sh.
# ParaView's pvpython runs with its own Xvfb (an X display for rendering, none needed on the host).
python="$1"
shift
if [ ! -x "$python" ]; then
  echo "SKIPPED: $python not found; run scripts/setup-viewers.sh (CI does, via scripts/setup.sh)"
  exit 77
fi
case "$python" in
  *pvpython*)
    if ! command -v Xvfb >/dev/null; then
      echo "SKIPPED: Xvfb not found (Debian's xvfb); run scripts/setup-viewers.sh"
      exit 77
    fi
    # Xvfb picks a free display itself and says which when it is ready (-displayfd): tests run
    # side by side never race for one, as xvfb-run -a's guess of :99 did under load. A client
    # is sometimes refused all the same ("bad X server connection", on a loaded machine); that,
    # and only that, is tried again (at most three times), each time with a new Xvfb: retrying
    # the same server once failed three times in a row in CI.
    log=$(mktemp)
    for attempt in 1 2 3; do
      fifo=$(mktemp -u)
      mkfifo "$fifo"
      Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$fifo" 2>/dev/null &
      xvfb=$!
      read -r display <"$fifo"
      rm -f "$fifo"
      DISPLAY=":$display" "$python" "$@" >"$log" 2>&1
      status=$?
      kill "$xvfb" 2>/dev/null
      wait "$xvfb" 2>/dev/null
      grep -q "bad X server connection" "$log" || break
      echo "viewer test: attempt $attempt refused by the X server on :$display; again" >&2
      sleep 1
    done
    cat "$log"
    rm -f "$log"
    exit "$status" ;;
esac
exec "$python" "$@"
