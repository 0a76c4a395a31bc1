"""An in-process PyMOL instance (pymol2) for the viewer checks, or exit 77 (skipped, saying why)
without Debian's python3-pymol. pymol.finish_launching() starts PyMOL in a thread and returns as
soon as the C object exists, and under load a command could reach it before it was ready ('null
argument to internal routine'); pymol2.PyMOL().start() returns once it is."""
import sys


def start_pymol():
    try:
        import pymol2
    except ImportError:
        print("SKIPPED: Debian's python3-pymol is not installed (scripts/setup-viewers.sh)")
        sys.exit(77)
    instance = pymol2.PyMOL()
    instance.start()
    return instance
