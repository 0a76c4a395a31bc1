"""The keywords of dcs's Python calls, held once: KEYWORDS lists each with its group, default,
check and documentation. make_settings checks them and hands them by name to the extension
(dcs._dcs.Settings); with_keywords gives each function its keyword parameters (signature and
docstring) from the table, so a keyword is added here and nowhere else.

The rules that turn them into a grid and physics are the command line's own (C++
``resolve_grid_and_physics``, ``--periodic`` and ``--box``): None means "not given", exactly
as an option left off.
"""
from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import _dcs

GridArg = Union[int, Sequence[int], None]
Vec3Arg = Optional[Sequence[float]]


def _counts(grid: GridArg, name: str) -> list:
    if grid is None:
        return []
    if isinstance(grid, numbers.Integral):
        return [int(grid)]
    try:
        counts = [c for c in grid]
    except TypeError:
        raise TypeError(f"grid must be an int or 3 ints, got {type(grid).__name__}") from None
    for c in counts:
        if not isinstance(c, numbers.Integral):
            raise TypeError(f"grid must be an int or 3 ints, got {grid!r}")
    if len(counts) not in (1, 3):
        raise ValueError(f"--grid takes 1 (N) or 3 (NX NY NZ) counts, not {len(counts)}")
    return [int(c) for c in counts]


def _vec3(value: Vec3Arg, name: str):
    if value is None:
        return None
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (3,):
        raise ValueError(f"{name} must be 3 numbers (x, y, z in Å), got shape {v.shape}")
    return [float(c) for c in v]


def _real(value, name: str):
    if value is None:
        return None
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def _text(value, name: str):
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _text_or_empty(value, name: str) -> str:
    return _text(value, name) or ""


def _threads(value, name: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"threads must be an int >= 0 (0: every hardware thread), got {value!r}")
    return int(value)


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _box(value, name: str):
    """(a, b, c), (a, b, c, alpha, beta, gamma) or 3 box vectors as rows in reduced form ->
    the 6 numbers the extension takes (lengths in Å, angles in degrees)."""
    if value is None:
        return None
    v = np.asarray(value, dtype=np.float64)
    if v.shape == (3,):
        return [float(c) for c in v] + [90.0, 90.0, 90.0]
    if v.shape == (6,):
        return [float(c) for c in v]
    if v.shape != (3, 3):
        raise ValueError(f"{name} must be (a, b, c), (a, b, c, alpha, beta, gamma) or 3 box "
                         f"vectors (3x3), got shape {v.shape}")
    a, b, c = v
    scale = float(np.abs(v).max())
    if max(abs(a[1]), abs(a[2]), abs(b[2])) > 1e-6 * scale:
        raise ValueError(f"{name}: box vectors must be in reduced form, a along x and b in the "
                         f"xy plane (a[1] = a[2] = b[2] = 0, as MDAnalysis's "
                         f"triclinic_dimensions, OpenMM and GROMACS give them), got {v.tolist()}")
    lengths = [float(np.linalg.norm(x)) for x in (a, b, c)]

    def angle(x, y):
        cosine = float(np.dot(x, y)) / (np.linalg.norm(x) * np.linalg.norm(y))
        return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))
    if min(lengths) <= 0.0:
        raise ValueError(f"{name}: a box vector has length 0: {v.tolist()}")
    return lengths + [angle(b, c), angle(a, c), angle(a, b)]


@dataclass(frozen=True)
class Keyword:
    name: str
    group: str       # "grid", "physics", "compute" or "periodic"
    default: Any
    check: Callable[[Any, str], Any]  # the value given -> what the extension takes
    doc: str


KEYWORDS = (
    Keyword("grid", "grid", None, _counts,
            "points per axis, N or (NX, NY, NZ) (cubic voxels sized to the padded box); "
            "default 129 unless a spacing is given."),
    Keyword("spacing", "grid", None, _real,
            "Å; alone, the counts follow from the padded box; with grid, both as given."),
    Keyword("padding", "grid", None, _real,
            "Å around the atoms' bounding box on every side (default 10)."),
    Keyword("origin", "grid", None, _vec3, "the first grid point (x, y, z), Å."),
    Keyword("center", "grid", None, _vec3, "the box centre (x, y, z), Å (not with origin)."),
    Keyword("units", "physics", None, _text,
            '"kT/e" (default), "kcal/mol/e", "kJ/mol/e", "V" or "e/A".'),
    Keyword("dielectric", "physics", None, _real,
            "relative permittivity (default 1; 78.54, water's, with an ionic strength), or k "
            'of eps = k r with dielectric_model="distance".'),
    Keyword("temperature", "physics", None, _real,
            "K (default 298.15), for kT/e and the Debye length."),
    Keyword("min_distance", "physics", None, _real,
            "Å (default 0.1): distances below it are clamped, so no value is infinite."),
    Keyword("ionic_strength", "physics", None, _real,
            "mol/L (default 0): Debye-Hückel screening exp(-r/λ)/r."),
    Keyword("dielectric_model", "physics", None, _text,
            '"constant" (default) or "distance" (eps = k r, ChimeraX\'s).'),
    Keyword("preset", "physics", None, _text_or_empty,
            '"chimerax" or "pymol": that tool\'s constant, units, dielectric and grid defaults '
            "(under the keywords given; units cannot be combined with a preset)."),
    Keyword("device", "compute", "auto", _text,
            '"auto" (every GPU, else the CPU: the command line\'s default; the CPU for '
            'periodic=True), "cpu", "cuda" (every GPU) or "cuda:N[,M...]".'),
    Keyword("kernel", "compute", None, _text_or_empty,
            "a potential kernel of `dcs kernels` (default: the backend's)."),
    Keyword("threads", "compute", 0, _threads, "CPU threads (0: all)."),
    Keyword("periodic", "periodic", False, _flag,
            "True: the periodic potential of every atom and all its images in the cell `box` "
            "(Ewald summation, tin-foil boundary, a net charge neutralised by a uniform "
            "background, mean over the cell 0), as the command line's --periodic; the grid "
            "then spans the cell unless origin, center or padding place it (on a GPU where "
            "there is one, as the command line); the Coulomb model only."),
    Keyword("box", "periodic", None, _box,
            "the cell for periodic=True: (a, b, c) in Å, (a, b, c, alpha, beta, gamma) with "
            "the angles in degrees (MDAnalysis's dimensions, --box), or the 3 box vectors as "
            "rows in reduced form (a along x, b in the xy plane: MDAnalysis's "
            "triclinic_dimensions, OpenMM's and GROMACS's box)."),
    Keyword("ewald_error", "periodic", None, _real,
            "periodic=True: the Ewald sum's relative RMS error target, 1e-8..1e-2 (default "
            "1e-5, --ewald-error)."),
)
_BY_NAME = {k.name: k for k in KEYWORDS}


def keywords(*groups: str) -> list:
    """The table's keywords of `groups`, in table order."""
    return [k for k in KEYWORDS if k.group in groups]


def make_settings(**given) -> "_dcs.Settings":
    """The extension's settings from keywords of the table (any subset; the rest default).
    TypeError for a name the table lacks; the checks of each keyword (TypeError, ValueError)."""
    unknown = sorted(set(given) - set(_BY_NAME))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    values = {k.name: k.check(given.get(k.name, k.default), k.name) for k in KEYWORDS}
    if values["periodic"] and values["box"] is None:
        raise ValueError("periodic=True needs box=: the cell, (a, b, c), (a, b, c, alpha, beta, "
                         "gamma) or 3 box vectors (arrays have no CRYST1 record)")
    for name in ("box", "ewald_error"):
        if values[name] is not None and not values["periodic"]:
            raise ValueError(f"{name}= applies to periodic=True (without it the potential is "
                             f"the open-boundary sum of the atoms, which has no cell)")
    return _dcs.Settings(**values)


def pick(given: dict, groups: Sequence[str], function: str) -> dict:
    """`given` checked against the keywords of `groups`: TypeError naming `function` for any
    other name, as Python says for an unexpected keyword argument."""
    allowed = {k.name for k in keywords(*groups)}
    for name in given:
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument '{name}'")
    return given


def describe(*groups: str) -> str:
    """The documentation lines of the keywords of `groups`, as a docstring lists them."""
    lines = []
    for k in keywords(*groups):
        words = f"{k.name}: {k.doc}".split()
        line = "    "
        for word in words:
            if len(line) + len(word) + 1 > 96:
                lines.append(line.rstrip())
                line = "        "
            line += word + " "
        lines.append(line.rstrip())
    return "\n".join(lines)


def with_keywords(*groups: str):
    """Decorator: the function takes **keywords of `groups`; its signature (help(), IDEs) lists
    them as keyword-only parameters with the table's defaults, and "{keywords}" in its
    docstring becomes their documentation."""
    def decorate(function):
        signature = inspect.signature(function)
        parameters = [p for p in signature.parameters.values()
                      if p.kind is not inspect.Parameter.VAR_KEYWORD]
        parameters += [inspect.Parameter(k.name, inspect.Parameter.KEYWORD_ONLY,
                                         default=k.default) for k in keywords(*groups)]
        function.__signature__ = signature.replace(parameters=parameters)
        if function.__doc__:
            function.__doc__ = function.__doc__.replace("{keywords}", describe(*groups).strip())
        return function
    return decorate


def float_array(value, name: str, shape: str) -> np.ndarray:
    """`value` as a C-contiguous float64 array of `shape` "(N, 3)" or "(N,)": any real dtype
    (float32 converts exactly); TypeError for other dtypes, ValueError for other shapes."""
    a = np.asarray(value)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {a.dtype}")
    ok = a.ndim == 2 and a.shape[1] == 3 if shape == "(N, 3)" else a.ndim == 1
    if not ok:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)
