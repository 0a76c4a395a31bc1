"""The verdict of the check scripts that stop at their first failure: FAIL and the reason on
stdout, exit status 1 (what CTest reports as a failed test)."""
import subprocess
import sys


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def dcs(args, *options, rc=0, env=None):
    """Runs args.dcs with `options` (and --no-progress); fails unless it exits `rc`."""
    run = subprocess.run([args.dcs, *options, "--no-progress"], capture_output=True, text=True,
                         env=env)
    if run.returncode != rc:
        fail(f"dcs {' '.join(options)}: exit {run.returncode} (expected {rc})\n{run.stderr}")
    return run
