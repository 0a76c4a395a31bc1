"""The command lines of the Python check scripts, each running one case in a fresh temporary
directory: `SCRIPT --dcs DCS [--OPTION VALUE ...] CASE` for the scripts whose cases are
functions named case_NAME (run_case: prints "SCRIPT: OK CASE", the line their CTest
PASS_REGULAR_EXPRESSION waits for), `SCRIPT DCS SOURCE CASE` for the command-line scripts with
a CASES table (run_listed_case: prints "CASE: ok"; CASE `list` prints the names)."""
import argparse
import sys
import tempfile


def cases_of(namespace):
    """{NAME: function} of the case_NAME functions in a module's globals()."""
    return {name[5:]: fn for name, fn in namespace.items() if name.startswith("case_")}


def run_case(script, cases, options=(), context=None):
    """Parses --dcs, each required --OPTION of `options` and the case name; runs the case with
    (args, work), or with context(args, work) where a script wraps both in one object."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--dcs", required=True)
    for option in options:
        parser.add_argument(option, required=True)
    parser.add_argument("case", choices=sorted(cases))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"dcs-{script}-") as work:
        if context is None:
            cases[args.case](args, work)
        else:
            cases[args.case](context(args, work))
    print(f"{script}: OK {args.case}")


def run_listed_case(cases, prefix="dcs-cli-"):
    """Runs cases[argv[3]](tmp) in a fresh temporary directory named prefix...; `list` prints
    the case names."""
    name = sys.argv[3]
    if name == "list":
        print("\n".join(cases))
        sys.exit(0)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        cases[name](tmp)
    print(f"{name}: ok")
