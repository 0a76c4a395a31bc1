"""The verdict of the check scripts that stop at their first failure: FAIL and the reason on
stdout, exit status 1 (what CTest reports as a failed test)."""
import sys


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
