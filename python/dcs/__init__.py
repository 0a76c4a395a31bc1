"""dcs: electrostatic potential maps by direct Coulomb summation, from Python.

The same engine as the ``dcs`` command line (CPU SIMD backend, or every GPU), on numpy arrays::

    import numpy as np, dcs
    v = dcs.potential_map(positions, charges, grid=65)   # xarray.DataArray, dims (x, y, z), Å
    v.sel(x=0.0, y=0.0, z=0.0, method="nearest")
    dcs.potential_map(positions, charges, periodic=True, box=(60, 60, 60))  # Ewald, the cell
    dcs.potential_at(points, positions, charges)         # numpy (M,)
    dcs.potential_at_atoms(positions, charges)           # each atom from the others (--at-atoms)
    dcs.write_map(v, "mol.h5"); dcs.read_map("mol.h5")   # the command line's HDF5 file
    dcs.write_map(v, "mol.dx")                           # its OpenDX (and .mrc) too

``dcs.mda.PotentialMap`` maps an MDAnalysis trajectory (mean and stdev over frames) and
``dcs.pymol`` adds the PyMOL command ``dcs_map``; both are imported on demand. The engine's
warnings (a small box, ...) are Python warnings of the category dcs.DcsWarning.
"""
from ._maps import (colour_range, grid_of, potential_at, potential_at_atoms, potential_map,
                    presets)
from ._files import read_map, write_map
from ._dcs import DcsWarning, __version__

__all__ = ["potential_map", "potential_at", "potential_at_atoms", "grid_of", "colour_range",
           "read_map", "write_map", "presets", "DcsWarning", "__version__"]
