"""Positions and charges of a whitespace-separated PQR file, for the float64 references of the
Python checks and benchmarks: the last five fields of an ATOM/HETATM record are x y z q r."""
import numpy as np


def read_pqr(path):
    """(positions (N, 3), charges (N,)) in float64 of the file's first model (its records up to
    the first ENDMDL or END that follows an atom)."""
    positions, charges = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("END") and positions:  # END or ENDMDL
                break
            if not line.startswith(("ATOM", "HETATM")):
                continue
            fields = line.split()
            positions.append([float(v) for v in fields[-5:-2]])
            charges.append(float(fields[-2]))
    return np.array(positions, np.float64).reshape(-1, 3), np.array(charges, np.float64)
