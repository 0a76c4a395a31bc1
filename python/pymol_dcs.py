"""PyMOL: `run python/pymol_dcs.py` adds the command dcs_map (dcs/pymol.py), with the dcs
package installed in PyMOL's Python (pip install . from the dcs checkout)."""
import dcs.pymol  # noqa: F401  (registers dcs_map with cmd.extend)
