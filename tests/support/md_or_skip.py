"""MDAnalysis and MDAnalysisTests' data files for the checks that read real MD files, or exit
77 (CTest's "skipped", saying why) where they are missing: run those checks with the venv of
scripts/setup-md.sh. MDAnalysis's warnings (missing masses, guessed elements) are silenced."""
import sys
import warnings

try:
    import MDAnalysis as mda
    import MDAnalysisTests.datafiles as data
except ImportError as missing:
    print(f"SKIPPED: {missing} (scripts/setup-md.sh installs MDAnalysis and MDAnalysisTests)")
    sys.exit(77)

warnings.filterwarnings("ignore")
__all__ = ["mda", "data"]
