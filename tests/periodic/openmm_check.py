#!/usr/bin/env python3
"""The Ewald energy of real periodic systems, 1/2 sum q_i phi_i from dcs::periodic (smooth PME
at its default accuracy, through tests/periodic/periodic_dump), against OpenMM's NonbondedForce
PME energy of the same charges and cell: Reference platform (float64), Lennard-Jones off (epsilon
0), no exceptions, box vectors in OpenMM's reduced form. Within 1e-5 relative (issue 34).

The systems come from MDAnalysisTests (read with MDAnalysis): GROMACS 2lyz (TPR, orthorhombic,
net +8 e), AMBER tz2 in a truncated octahedron (parm7 + NetCDF), GROMACS adenylate kinase in
water (TPR, rhombic dodecahedron, 47681 atoms). Exit 77 (skipped, saying why) without MDAnalysis
or OpenMM (scripts/setup-md.sh installs both into .venv-md).

With --dcs DCS the energy is the command line's instead: the system written as a PQR file (the
positions and charges OpenMM then gets, rounded alike), `dcs --atoms X.pqr --box a,b,c,alpha,
beta,gamma --at-atoms --periodic`, whose summary prints 1/2 sum q_i phi_i in kJ/mol.

Usage: openmm_check.py --dump PERIODIC_DUMP --case NAME
       openmm_check.py --dcs DCS --case NAME
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import numpy as np
    import MDAnalysis as mda
    import MDAnalysisTests.datafiles as data
    import openmm
    from openmm.app.internal.unitcell import computePeriodicBoxVectors, reducePeriodicBoxVectors
except ImportError as missing:
    print(f"SKIPPED: {missing} (scripts/setup-md.sh installs MDAnalysis, MDAnalysisTests and "
          "OpenMM into .venv-md)")
    sys.exit(77)

warnings.filterwarnings("ignore")

# name: (topology, trajectory or None, OpenMM cutoff nm, OpenMM ewaldErrorTolerance)
CASES = {
    "lysozyme_tpr": (data.TPR2023, None, 1.2, 1e-6),
    "truncoct_parm7": (data.PRM7, data.NCDFtruncoct, 1.2, 1e-6),
    "adk_water_tpr": (data.TPR, None, 1.0, 1e-5),
}
LARGE = {"adk_water_tpr"}
TOLERANCE = 1e-5


def load(case):
    topology, trajectory, _, _ = CASES[case]
    universe = mda.Universe(topology, trajectory) if trajectory else mda.Universe(topology)
    universe.trajectory[0]
    positions = universe.atoms.positions.astype(np.float64)  # Å
    charges = universe.atoms.charges.astype(np.float64)  # e
    return positions, charges, universe.dimensions.astype(np.float64)


def dcs_energy(dump, positions, charges, dimensions, work):
    path = os.path.join(work, "system.xyzq")
    with open(path, "w") as out:
        out.write("cell " + " ".join(repr(float(v)) for v in dimensions) + "\n")
        for (x, y, z), q in zip(positions.tolist(), charges.tolist()):  # Python floats: repr
            out.write(f"{x!r} {y!r} {z!r} {q!r}\n")                    # keeps every digit
    started = time.perf_counter()
    result = subprocess.run([dump, path], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"FAIL: periodic_dump exited {result.returncode}: {result.stderr.strip()}")
        sys.exit(1)
    seconds = time.perf_counter() - started
    return json.loads(result.stdout), seconds


def dcs_cli_energy(dcs, positions, charges, dimensions, work):
    """The energy from `dcs --at-atoms --periodic` (kJ/mol) and the positions and charges it read
    (the PQR's rounding), by the summary's energy line."""
    positions = np.round(positions, 6)
    charges = np.round(charges, 8)
    path = os.path.join(work, "system.pqr")
    with open(path, "w") as out:
        for n, ((x, y, z), q) in enumerate(zip(positions.tolist(), charges.tolist())):
            out.write(f"ATOM  {n % 100000:5d}  X   RES A{n // 10 % 10000:4d}    "
                      f"{x:.6f} {y:.6f} {z:.6f} {q:.8f} 1.5\n")
    box = ",".join(repr(float(v)) for v in dimensions)
    started = time.perf_counter()
    result = subprocess.run([dcs, "--atoms", path, "--box", box, "--at-atoms", "--periodic",
                             "--device", "cpu", "--no-progress", "-o",
                             os.path.join(work, "atoms.h5")], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"FAIL: dcs exited {result.returncode}: {result.stderr.strip()}")
        sys.exit(1)
    seconds = time.perf_counter() - started
    for line in result.stdout.splitlines():
        if "1/2 sum q_i phi_i" in line:
            kj = float(line.split("=")[2].split("kJ/mol")[0])
            return kj, positions, charges, seconds
    print(f"FAIL: no energy line in the summary:\n{result.stdout}")
    sys.exit(1)


def openmm_coulomb_constant():
    """OpenMM's 1/(4 pi eps0) in kJ/mol nm/e^2: the energy of two unit charges 1 nm apart."""
    system = openmm.System()
    force = openmm.NonbondedForce()
    force.setNonbondedMethod(openmm.NonbondedForce.NoCutoff)
    for _ in range(2):
        system.addParticle(1.0)
        force.addParticle(1.0, 0.1, 0.0)
    system.addForce(force)
    return energy_of(system, [openmm.Vec3(0, 0, 0), openmm.Vec3(1, 0, 0)])


def energy_of(system, positions_nm):
    integrator = openmm.VerletIntegrator(0.001)
    platform = openmm.Platform.getPlatformByName("Reference")
    context = openmm.Context(system, integrator, platform)
    context.setPositions(positions_nm)
    state = context.getState(getEnergy=True)
    return state.getPotentialEnergy().value_in_unit(openmm.unit.kilojoule_per_mole)


def openmm_energy(positions, charges, dimensions, cutoff_nm, tolerance):
    a, b, c = (float(v) / 10.0 for v in dimensions[:3])
    alpha, beta, gamma = (math.radians(float(v)) for v in dimensions[3:])
    vectors = reducePeriodicBoxVectors(computePeriodicBoxVectors(a, b, c, alpha, beta, gamma))
    system = openmm.System()
    system.setDefaultPeriodicBoxVectors(*vectors)
    force = openmm.NonbondedForce()
    force.setNonbondedMethod(openmm.NonbondedForce.PME)
    force.setCutoffDistance(cutoff_nm)
    force.setEwaldErrorTolerance(tolerance)
    force.setUseDispersionCorrection(False)
    for q in charges:
        system.addParticle(1.0)
        force.addParticle(float(q), 0.1, 0.0)
    system.addForce(force)
    started = time.perf_counter()
    energy = energy_of(system, [openmm.Vec3(*(p / 10.0)) for p in positions])
    return energy, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--dump", help="periodic_dump: dcs::periodic's energy")
    which.add_argument("--dcs", help="the dcs binary: `dcs --at-atoms --periodic`'s energy")
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    if args.case in LARGE and os.environ.get("DCS_TEST_SANITIZED") == "1":
        print(f"SKIPPED: {args.case} is too large for the sanitized build (minutes)")
        return 77
    positions, charges, dimensions = load(args.case)
    _, _, cutoff_nm, tolerance = CASES[args.case]
    with tempfile.TemporaryDirectory(prefix="dcs-openmm-") as work:
        if args.dcs:
            ours_kj, positions, charges, ours_s = dcs_cli_energy(args.dcs, positions, charges,
                                                                 dimensions, work)
            ours = {"parameters": "dcs --at-atoms --periodic"}
        else:
            ours, ours_s = dcs_energy(args.dump, positions, charges, dimensions, work)
            ours_kj = ours["energy"] * openmm_coulomb_constant() * 10.0  # e^2/Å -> kJ/mol
    theirs, theirs_s = openmm_energy(positions, charges, dimensions, cutoff_nm, tolerance)
    relative = abs(ours_kj - theirs) / abs(theirs)
    print(f"{args.case}: {len(charges)} atoms, net charge {charges.sum():+.4f} e, cell "
          f"{' '.join(f'{v:g}' for v in dimensions)}")
    print(f"  dcs    {ours_kj:.10g} kJ/mol ({ours['parameters']}; {ours_s:.1f} s)")
    print(f"  OpenMM {theirs:.10g} kJ/mol (PME, cutoff {cutoff_nm} nm, tolerance {tolerance:g}, "
          f"Reference platform, OpenMM {openmm.__version__}; {theirs_s:.1f} s)")
    print(f"  relative difference {relative:.2e} (limit {TOLERANCE:g})")
    if not relative <= TOLERANCE:
        print("FAIL: the Ewald energies differ")
        return 1
    print("PASS: Ewald energy matches OpenMM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
