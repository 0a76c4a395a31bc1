"""Synthetic atoms for runs that must take a while (pipeline kill tests, MPI benchmark): a fixed
pseudo-random sequence (an LCG, so every run on every machine writes the same atoms) in a cube of
60 Å, charges in [-0.8, 0.8)."""


def write_xyzq(path, count):
    """Writes `count` atoms to `path` as "x y z q" lines."""
    state = 12345
    with open(path, "w") as handle:
        for _ in range(count):
            coords = []
            for _ in range(4):
                state = (state * 1103515245 + 12345) % 2**31
                coords.append(state / 2**31)
            handle.write(f"{coords[0] * 60 - 30:.3f} {coords[1] * 60 - 30:.3f} "
                         f"{coords[2] * 60 - 30:.3f} {coords[3] * 1.6 - 0.8:.3f}\n")
