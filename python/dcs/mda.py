"""dcs.mda.PotentialMap: the mean and standard deviation of the potential over an MDAnalysis
trajectory, on dcs's engine (any format MDAnalysis reads; charges from the topology).

    import MDAnalysis as mda, dcs.mda
    u = mda.Universe(PSF, DCD)
    pm = dcs.mda.PotentialMap(u.select_atoms("protein"), grid=65, align="name CA").run(0, 10)
    pm.results.mean, pm.results.stdev      # xarray.DataArrays, dims (x, y, z), Å
    pm.results.min, pm.results.max         # per point over the frames
    pm.results.fit_rmsd                    # Å per frame (zeros without align)
    dcs.mda.PotentialMap(u.atoms, periodic=True).run()   # Ewald, each frame's own cell

It follows MDAnalysis's AnalysisBase conventions (DensityAnalysis is the precedent): __init__
stores its arguments, _prepare fixes the grid, _single_frame adds one frame, _conclude makes the
results.
"""
from __future__ import annotations

from typing import Optional, Union

import numpy as np
import xarray as xr
from MDAnalysis.analysis import align as mda_align
from MDAnalysis.analysis.base import AnalysisBase
from MDAnalysis.core.groups import AtomGroup
from MDAnalysis.exceptions import NoDataError

from . import _dcs
from ._files import _grid_of
from ._maps import _coords, colour_range
from ._settings import GridArg, Vec3Arg, keywords, make_settings, pick

# The attrs of the results: the physics keywords, and what the engine derives from them.
_ATTRS = [k.name for k in keywords("physics")] + ["coulomb_factor", "physics", "method"]


class PotentialMap(AnalysisBase):
    """The potential of `atomgroup` on one fixed grid, averaged over the frames analysed.

    The grid is placed once, around the atoms of the first frame analysed (after alignment),
    by the command line's rules for grid, spacing, padding, origin and center; or it is fully
    given (grid, spacing and origin together). Every frame is mapped on that same grid, so
    results.mean and results.stdev are point by point over the frames, as
    ``dcs --topology ... --trajectory ...`` computes them (Welford's recurrence in float64 per
    point, the population standard deviation sqrt(M2 / n); stored as float32 like its file).

    atomgroup: the atoms whose charges (from the topology) make the potential.
    grid, spacing, padding, origin, center: as for dcs.potential_map.
    like: a map (an xarray.DataArray with dims x, y, z, e.g. dcs.read_map of the command line's
        trajectory map) whose grid to use instead (its origin, spacing and counts): the results
        then have its coordinates bit for bit, so `cli - pm.results.mean` keeps every point.
        Placing the grid again around the first frame is not enough where two readers decode a
        frame differently (chemfiles and MDAnalysis round XTC coordinates about 1e-6 Å apart,
        which moves a placed grid's origin by as much).
    align: None, a selection string (in atomgroup's universe) or an AtomGroup: each frame is
        superposed (least-squares rotation and translation of those atoms) onto their positions
        in the first frame analysed before mapping, as --align does.
    periodic: True: each frame's periodic potential (Ewald summation of every atom of
        `atomgroup` and all its images) in that frame's own cell (ts.dimensions), as
        ``dcs --topology ... --trajectory ... --periodic`` computes it; the grid spans the first
        analysed frame's cell unless grid placement keywords or like= place it. Over an
        orthorhombic cell each frame takes the points i*L/n of its own cell (the same counts):
        where the cell changes (NPT), the mean is over the same fractional coordinates and the
        results' coordinates are those of the mean cell, as the command line's. A frame
        without a cell raises ValueError naming it; align cannot be combined (fitting rotates
        the atoms, not their cell). On the GPU where there is one, as the command line.
    Physics and device keywords (units, dielectric, ..., device, ewald_error) are
    dcs.potential_map's.

    Results: results.mean, results.stdev, results.min and results.max (xarray.DataArrays, dims
    ("x", "y", "z"), coordinates in Å, attrs with the settings, "frames" the number of frames;
    mean, min and max with the colour range of the command line's rule), results.fit_rmsd (Å,
    one per frame: the RMSD of the align atoms after the fit, zeros without align; the CLI's
    /trajectory/fit_rmsd), results.frames (the trajectory's frame indices analysed) and
    results.grid (origin, spacing, dims): what the command line stores in a trajectory map.
    """

    def __init__(self, atomgroup: AtomGroup, grid: GridArg = None, *,
                 spacing: Optional[float] = None, padding: Optional[float] = None,
                 origin: Vec3Arg = None, center: Vec3Arg = None,
                 align: Union[None, str, AtomGroup] = None, like: Optional[xr.DataArray] = None,
                 periodic: bool = False, verbose: bool = False, **physics):
        super().__init__(atomgroup.universe.trajectory, verbose=verbose)
        self._atomgroup = atomgroup
        self._grid_args = dict(grid=grid, spacing=spacing, padding=padding, origin=origin,
                               center=center)
        self._align = align
        self._like = like
        if like is not None and any(v is not None for v in self._grid_args.values()):
            raise ValueError("like= gives the whole grid: leave grid, spacing, padding, origin "
                             "and center out")
        self._physics = pick(physics, ("physics", "compute", "periodic"), "PotentialMap")
        for name in ("periodic", "box"):
            if name in self._physics:
                raise TypeError(f"PotentialMap() got an unexpected keyword argument '{name}'")
        self._periodic = bool(periodic)
        if self._periodic and align is not None:
            raise ValueError("align with periodic=True: fitting rotates the atoms but not their "
                             "cell, which breaks the periodic images; leave out align (as the "
                             "command line refuses --align with --periodic)")
        if not self._periodic and "ewald_error" in self._physics:
            raise ValueError("ewald_error= applies to periodic=True")

    def _cell(self) -> dict:
        """The keywords of this frame's cell: periodic=True and box=ts.dimensions (none
        without periodic)."""
        if not self._periodic:
            return {}
        ts = self._atomgroup.universe.trajectory.ts
        dims = ts.dimensions
        if dims is None or not np.all(np.isfinite(dims)) or not np.all(dims[:3] > 0):
            raise ValueError(f"frame {ts.frame} has no cell (ts.dimensions is {dims}); "
                             f"periodic=True needs every frame's cell")
        return {"periodic": True, "box": [float(v) for v in dims]}

    def _positions(self) -> np.ndarray:
        """This frame's atom positions (float64), superposed onto the reference when aligning
        (the fit's RMSD in self._rmsd, 0 without)."""
        positions = self._atomgroup.positions.astype(np.float64)
        self._rmsd = 0.0
        if self._fit is None:
            return positions
        mobile = self._fit.positions.astype(np.float64)
        mobile_centre = mobile.mean(axis=0)
        rotation, rmsd = mda_align.rotation_matrix(mobile - mobile_centre, self._reference)
        self._rmsd = float(rmsd)
        return (positions - mobile_centre) @ np.asarray(rotation).T + self._reference_centre

    def _prepare(self):
        try:
            self._charges = np.ascontiguousarray(self._atomgroup.charges, dtype=np.float64)
        except NoDataError:
            raise ValueError("the topology has no charges (dcs.mda.PotentialMap needs partial "
                             "charges: PSF, PRMTOP, TPR, PQR, ...)") from None
        self._fit = None
        if isinstance(self._align, str):
            self._fit = self._atomgroup.universe.select_atoms(self._align)
        elif self._align is not None:
            self._fit = self._align
        if self._fit is not None and len(self._fit) < 3:
            raise ValueError(f"align selects {len(self._fit)} atoms; a fit needs at least 3")
        # The first frame analysed fixes the reference of the fit and the grid.
        for _ in self._sliced_trajectory:
            break
        if self._fit is not None:
            reference = self._fit.positions.astype(np.float64)
            self._reference_centre = reference.mean(axis=0)
            self._reference = reference - self._reference_centre
        if self._like is not None:
            origin, spacing = _grid_of(self._like)
            placed = {"origin": origin, "spacing": spacing,
                      "dims": [int(self._like.sizes[a]) for a in "xyz"]}
        else:
            placed = _dcs.grid_of(self._positions(), self._charges,
                                  make_settings(**self._grid_args, **self._physics,
                                                **self._cell()))
        spacing = placed["spacing"]
        # A periodic grid over an orthorhombic cell (no placement keywords): every frame takes
        # the cell's points i*L/n of its own cell, as the command line does (each frame at the
        # same fractional coordinates when the cell changes).
        self._cell_grid = (self._periodic and self._like is None and
                           all(self._grid_args[k] is None for k in ("origin", "center",
                                                                    "padding")) and
                           np.all(self._atomgroup.universe.trajectory.ts.dimensions[3:] == 90.0))
        self._spacings = []
        if not self._cell_grid and not spacing[0] == spacing[1] == spacing[2]:
            raise ValueError(f"the grid's voxels are not cubic ({spacing}): every frame is "
                             f"mapped on one grid of cubic voxels; a periodic grid over an "
                             f"orthorhombic cell has the cell's own spacing per axis, so give "
                             f"like= (the command line's map) or place the grid (origin, "
                             f"center or padding)")
        self._placed = placed
        # Every frame on this grid: counts, origin and spacing all given.
        self._frame_grid = dict(grid=list(placed["dims"]), spacing=spacing[0],
                                origin=placed["origin"])
        # Periodic frames each take their own cell (_single_frame).
        self._frame_settings = None if self._periodic else make_settings(**self._frame_grid,
                                                                          **self._physics)
        dims = placed["dims"]
        self._mean = np.zeros((dims[2], dims[1], dims[0]))
        self._m2 = np.zeros_like(self._mean)
        self._min = np.full(self._mean.shape, np.inf, dtype=np.float32)
        self._max = np.full(self._mean.shape, -np.inf, dtype=np.float32)
        self._rmsds, self._frames = [], []
        self._count = 0
        self._meta = None

    def _single_frame(self):
        settings = self._frame_settings
        if self._cell_grid:  # the points of this frame's own cell, the same counts
            cell = self._cell()
            self._spacings.append([cell["box"][a] / self._placed["dims"][a] for a in range(3)])
            settings = make_settings(grid=list(self._placed["dims"]), **self._physics, **cell)
        elif self._periodic:  # this frame's own cell
            settings = make_settings(**self._frame_grid, **self._physics, **self._cell())
        values, meta = _dcs.potential_map(self._positions(), self._charges, settings)
        self._meta = meta
        self._count += 1
        self._rmsds.append(self._rmsd)
        self._frames.append(self._ts.frame)
        np.minimum(self._min, values, out=self._min)
        np.maximum(self._max, values, out=self._max)
        delta = values - self._mean
        self._mean += delta / self._count
        self._m2 += delta * (values - self._mean)

    def _conclude(self):
        if self._count == 0:
            raise ValueError("no frames were analysed")
        p = dict(self._placed)
        if self._cell_grid and any(sp != self._spacings[0] for sp in self._spacings):
            # The cell changed: the mean in fractional space, stored with the mean cell.
            p["spacing"] = list(np.mean(np.array(self._spacings), axis=0))
        coords = _coords(p["origin"], p["spacing"], p["dims"])
        attrs = {name: self._meta[name] for name in _ATTRS}
        attrs.update(origin=list(p["origin"]), spacing=list(p["spacing"]), frames=self._count)
        for key, value in self._meta["provenance"].items():
            attrs["provenance_" + key] = value
        stdev = np.sqrt(np.maximum(self._m2, 0.0) / self._count)
        def make(a, name, ranged=True):
            values = a.astype(np.float32)
            extra = colour_range(values) if ranged else {}
            return xr.DataArray(values.T, dims=("x", "y", "z"), coords=coords, name=name,
                                attrs={**attrs, **extra})

        self.results.mean = make(self._mean, "potential_mean")
        self.results.stdev = make(stdev, "potential_stdev", ranged=False)
        self.results.min = make(self._min, "potential_min")
        self.results.max = make(self._max, "potential_max")
        self.results.fit_rmsd = np.array(self._rmsds)
        self.results.frames = np.array(self._frames, dtype=np.int64)
        self.results.grid = dict(p)
        self.results.frames_analysed = self._count
