"""dcs installed like software: `cmake --install` into a temporary prefix and `cpack -G DEB`, then
the installed `dcs` and `dcs preview` run from a copy of the prefix, away from the source and
build trees, with the Python of the build (Debian's /usr/bin/python3), whatever PATH says.

    install_tests.py --cmake CMAKE --cpack CPACK --build BUILD_DIR --source SOURCE_DIR
                     --help2man 1|0 CASE

prefix: the binary, the Python helpers and the man page land in bin/, share/dcs/python/ and
        share/man/man1/ (where `man dcs` finds it); a copy of the prefix computes and previews a
        map; under strace no file of the source or build tree is touched; without its helpers
        the copy fails naming where it looked (no fallback to the source tree); a Python without
        h5py gets told what to install; a failing python3 first on PATH is never run, while
        $DCS_PYTHON is.
deb:    the .deb lists the same files, names its library dependencies, and its unpacked
        contents run.

Prints "install_tests: OK <case>"; exits 77 (skipped) without help2man or dpkg-dev.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# The installed program runs the interpreter of its build (DCS_PREVIEW_PYTHON, default Debian's
# /usr/bin/python3 with python3-h5py, python3-matplotlib), not the first python3 on PATH.
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"}
HELPERS = ("share/dcs/python/dcs_preview.py", "share/dcs/python/dcs_map.py")
MAN_PAGE = "share/man/man1/dcs.1"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def run(command, cwd, env=None, rc=0):
    done = subprocess.run(command, cwd=cwd, env=env or ENV, capture_output=True, text=True,
                          timeout=300)
    if rc is not None and done.returncode != rc:
        raise AssertionError(f"{' '.join(command)} exited {done.returncode} (expected {rc}):\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def check_layout(prefix):
    for path in ("bin/dcs", *HELPERS, MAN_PAGE):
        check(os.path.isfile(os.path.join(prefix, path)), f"not installed: {prefix}/{path}")
    with open(os.path.join(prefix, MAN_PAGE), encoding="utf-8") as f:
        man = f.read()
    check(man.startswith(".\\\" DO NOT MODIFY") and ".TH DCS \"1\"" in man and "\\-\\-atoms" in man,
          f"{MAN_PAGE} is not help2man's page of dcs --help:\n{man[:400]}")


def map_and_preview(prefix, work, env=None):
    """The installed binary computes a small map of 2lzt.pqr and previews it."""
    dcs = os.path.join(prefix, "bin", "dcs")
    run([dcs, "--atoms", "2lzt.pqr", "--grid", "17", "-q", "--force"], work)
    shown = run([dcs, "preview", "2lzt.h5", "-o", "2lzt.png", "--force"], work, env)
    check(os.path.getsize(os.path.join(work, "2lzt.png")) > 10000, "the PNG is too small")
    check("2lzt.h5 -> 2lzt.png: colour limits" in shown.stdout, f"preview said {shown.stdout}")


def file_accesses(command, work):
    """Paths of every file system call of `command` and its children (strace -f)."""
    log = os.path.join(work, "strace.log")
    run(["strace", "-f", "-qq", "-s", "4096", "-e", "trace=file", "-o", log, *command], work)
    with open(log, encoding="utf-8", errors="replace") as f:
        return f.read()


def check_trees_untouched(prefix, work, trees):
    """strace: neither the installed map run nor the preview touches the source or build tree.
    The build tree's binary, traced the same way, must touch the source tree (the check works)."""
    dcs = os.path.join(prefix, "bin", "dcs")
    for command in ([dcs, "--atoms", "2lzt.pqr", "--grid", "17", "-q", "--force"],
                    [dcs, "preview", "2lzt.h5", "-o", "traced.png", "--force"]):
        trace = file_accesses(command, work)
        for tree in trees:
            lines = [line for line in trace.splitlines()
                     if f'"{tree}/' in line or f'"{tree}"' in line]
            check(not lines, f"{' '.join(command[1:2])} touched {tree}:\n" + "\n".join(lines[:5]))
    return trace


def case_prefix(args, work):
    prefix = os.path.join(work, "prefix")
    run([args.cmake, "--install", args.build, "--prefix", prefix], work)
    check_layout(prefix)
    # A copy elsewhere: nothing depends on the install prefix's path either.
    moved = os.path.join(work, "elsewhere", "dcs")
    shutil.copytree(prefix, moved, symlinks=True)
    shutil.rmtree(prefix)
    data = os.path.join(work, "data")
    os.mkdir(data)
    shutil.copy(os.path.join(args.source, "data", "2lzt.pqr"), data)
    map_and_preview(moved, data)
    if shutil.which("man", path=ENV["PATH"]):  # man-db looks in ../share/man of each PATH entry
        found = run(["man", "-w", "dcs"], data, dict(ENV, PATH=f"{moved}/bin:{ENV['PATH']}"))
        check(found.stdout.strip() == f"{moved}/{MAN_PAGE}", f"man -w dcs: {found.stdout}")

    trees = [os.path.realpath(args.source), os.path.realpath(args.build)]
    if shutil.which("strace", path=ENV["PATH"]):
        trace = check_trees_untouched(moved, data, trees)
        check(f'"{moved}/share/dcs/python/dcs_preview.py"' in trace,
              "strace did not show the installed dcs_preview.py being run")
        built = file_accesses([os.path.join(args.build, "bin", "dcs"), "preview", "2lzt.h5",
                               "-o", "built.png", "--force"], data)
        check(f'"{trees[0]}/python/dcs_preview.py"' in built,
              "the build tree's dcs did not run the source tree's script: strace check is blind")
    else:
        print("install_tests: strace not installed (scripts/setup.sh installs it): the file "
              "accesses are not checked")

    # A conda or pyenv python3 first on PATH (here one that fails loudly): the installed preview
    # never runs it; $DCS_PYTHON, when set, is what runs.
    fake_bin = os.path.join(work, "fake-bin")
    os.mkdir(fake_bin)
    with open(os.path.join(fake_bin, "python3"), "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\necho 'FAKE PYTHON3 RAN' >&2\nexit 42\n")
    os.chmod(os.path.join(fake_bin, "python3"), 0o755)
    fake_path = dict(ENV, PATH=f"{fake_bin}:{ENV['PATH']}")
    shown = run([os.path.join(moved, "bin", "dcs"), "preview", "2lzt.h5", "-o", "fake.png",
                 "--force"], data, fake_path, rc=None)
    check(shown.returncode == 0 and "FAKE PYTHON3 RAN" not in shown.stderr,
          f"the preview ran PATH's python3 (exit {shown.returncode}):\n{shown.stderr}")
    chosen = run([os.path.join(moved, "bin", "dcs"), "preview", "2lzt.h5", "-o", "fake.png",
                  "--force"], data, dict(fake_path, DCS_PYTHON=os.path.join(fake_bin, "python3")),
                 rc=42)
    check("FAKE PYTHON3 RAN" in chosen.stderr, f"$DCS_PYTHON was not run:\n{chosen.stderr}")

    # A Python without h5py: the message says what to install and how to choose another Python.
    bare = os.path.join(work, "bare-python")
    with open(bare, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")  # -S: no dist-packages
    os.chmod(bare, 0o755)
    lacking = run([os.path.join(moved, "bin", "dcs"), "preview", "2lzt.h5", "-o", "bare.png"],
                  data, dict(ENV, DCS_PYTHON=bare), rc=1)
    check("apt install python3-h5py python3-matplotlib" in lacking.stderr and
          "DCS_PYTHON" in lacking.stderr, f"missing modules: {lacking.stderr}")

    # Without its helpers the installed binary fails, naming where it looked: it never falls
    # back to the source tree the build recorded.
    shutil.rmtree(os.path.join(moved, "share", "dcs"))
    missing = run([os.path.join(moved, "bin", "dcs"), "preview", "2lzt.h5", "-o", "none.png"],
                  data, rc=1)
    check(f"{moved}/share/dcs/python/dcs_preview.py" in missing.stderr and
          trees[0] not in missing.stderr, f"helpers removed: {missing.stderr}")
    check(not os.path.exists(os.path.join(data, "none.png")), "a failed preview wrote a PNG")


def case_deb(args, work):
    run([args.cpack, "-G", "DEB", "--config", os.path.join(args.build, "CPackConfig.cmake"),
         "-B", work], work)
    debs = [f for f in os.listdir(work) if f.endswith(".deb")]
    check(len(debs) == 1, f"cpack made {debs}")
    deb = os.path.join(work, debs[0])
    listing = run(["dpkg-deb", "-c", deb], work).stdout
    for path in ("bin/dcs", *HELPERS, MAN_PAGE):
        check(f" ./usr/{path}\n" in listing, f"{debs[0]} lacks /usr/{path}:\n{listing}")
    depends = run(["dpkg-deb", "-f", deb, "Depends"], work).stdout
    check("libhdf5" in depends and "libc6" in depends, f"Depends (dpkg-shlibdeps): {depends}")
    unpacked = os.path.join(work, "unpacked")
    run(["dpkg-deb", "-x", deb, unpacked], work)
    check_layout(os.path.join(unpacked, "usr"))
    shutil.copy(os.path.join(args.source, "data", "2lzt.pqr"), work)
    map_and_preview(os.path.join(unpacked, "usr"), work)


CASES = {"prefix": case_prefix, "deb": case_deb}


def main():
    p = argparse.ArgumentParser()
    for option in ("--cmake", "--cpack", "--build", "--source"):
        p.add_argument(option, required=True)
    p.add_argument("--help2man", required=True, help="help2man found at configure time (1/0)")
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args()
    # CTest reports exit 77 as skipped: a machine without the tools installs no man page (or .deb).
    if args.help2man != "1":
        print("SKIPPED: help2man was not found when configuring: no man page is installed "
              "(scripts/setup.sh installs help2man; then reconfigure)")
        return 77
    if args.case == "deb" and not shutil.which("dpkg-shlibdeps"):
        print("SKIPPED: dpkg-shlibdeps (Debian's dpkg-dev) is not installed; scripts/setup.sh "
              "installs it")
        return 77
    with tempfile.TemporaryDirectory(prefix="dcs-install-") as work:
        CASES[args.case](args, os.path.realpath(work))
    print(f"install_tests: OK {args.case}")


if __name__ == "__main__":
    sys.exit(main())
