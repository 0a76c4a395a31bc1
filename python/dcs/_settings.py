"""The keywords every call shares, checked and handed to the extension (dcs._dcs.Settings).

The rules that turn them into a grid and physics are the command line's own (C++
``resolve_grid_and_physics``): None means "not given", exactly as an option left off.
"""
from __future__ import annotations

import numbers
from typing import Optional, Sequence, Union

import numpy as np

from . import _dcs

GridArg = Union[int, Sequence[int], None]
Vec3Arg = Optional[Sequence[float]]


def _counts(grid: GridArg) -> list:
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


def make_settings(grid: GridArg = None, spacing=None, padding=None, origin: Vec3Arg = None,
                  center: Vec3Arg = None, units: Optional[str] = None, dielectric=None,
                  temperature=None, min_distance=None, ionic_strength=None,
                  dielectric_model: Optional[str] = None, preset: Optional[str] = None,
                  device: str = "auto", kernel: Optional[str] = None,
                  threads: int = 0) -> "_dcs.Settings":
    for name, text in (("units", units), ("dielectric_model", dielectric_model),
                       ("preset", preset), ("device", device), ("kernel", kernel)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    if not isinstance(threads, numbers.Integral) or threads < 0:
        raise ValueError(f"threads must be an int >= 0 (0: every hardware thread), got {threads!r}")
    return _dcs.Settings(_counts(grid), _real(spacing, "spacing"), _real(padding, "padding"),
                         _vec3(origin, "origin"), _vec3(center, "center"), units,
                         _real(dielectric, "dielectric"), _real(temperature, "temperature"),
                         _real(min_distance, "min_distance"),
                         _real(ionic_strength, "ionic_strength"), dielectric_model,
                         preset or "", device, kernel or "", int(threads))


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
